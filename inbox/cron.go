package inbox

import (
	"fmt"

	"github.com/robfig/cron/v3"
)

// cronParser reads the cron expressions of wakeups: five fields (minute
// hour day-of-month month day-of-week), or a descriptor (@yearly,
// @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every
// DURATION), with an optional CRON_TZ=Zone prefix. This is robfig/cron's
// standard parser; seconds fields are not accepted.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron returns the schedule of a cron expression of a wakeup, the one
// grammar of them: recipe lint checks wakeup.schedules with it, so that
// what lint accepts is what runs. Its error says how to write one.
func ParseCron(expr string) (cron.Schedule, error) {
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression %q: %v; write five fields (minute hour day-of-month month day-of-week) like `0 9 * * 1-5`, or a descriptor like `@hourly` or `@every 30m`", expr, err)
	}
	return sched, nil
}
