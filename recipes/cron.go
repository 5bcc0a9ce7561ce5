package recipes

import (
	"fmt"

	"github.com/robfig/cron/v3"
)

// cronParser reads the cron expressions of wakeup schedules: five fields
// (minute hour day-of-month month day-of-week), or a descriptor (@yearly,
// @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every
// DURATION), with an optional CRON_TZ=Zone prefix. This is robfig/cron's
// standard parser; seconds fields are not accepted.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse returns the schedule of s's cron expression. The inbox's scheduler
// uses it, so that what lint accepts is what runs. Its error says how to
// write one.
func (s Schedule) Parse() (cron.Schedule, error) {
	sched, err := cronParser.Parse(s.Cron)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression %q: %v; write five fields (minute hour day-of-month month day-of-week) like `0 9 * * 1-5`, or a descriptor like `@hourly` or `@every 30m`", s.Cron, err)
	}
	return sched, nil
}
