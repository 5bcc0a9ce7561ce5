package recipes

import (
	"github.com/robfig/cron/v3"

	"github.com/engine-brain/brain/inbox"
)

// Parse returns the schedule of s's cron expression, parsed as the inbox
// parses every wakeup's (inbox.ParseCron), so that what lint accepts is
// what runs. Its error says how to write one.
func (s Schedule) Parse() (cron.Schedule, error) { return inbox.ParseCron(s.Cron) }
