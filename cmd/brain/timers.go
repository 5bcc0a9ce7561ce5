package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/engine-brain/brain/api"
)

// runTimers lists the timers of a process; with --in, --at or --cron it
// arms one that posts TEXT, with --cancel it cancels one (both operator).
func runTimers(ctx context.Context, cc *clientCall, args []string) error {
	fs := cc.flags()
	var req api.TimerRequest
	fs.StringVar(&req.In, "in", "", "arm a timer that posts TEXT once, after this `DURATION` (10m, 2h30m)")
	fs.StringVar(&req.At, "at", "", "arm a timer that posts TEXT once, at this RFC 3339 `TIME` (2026-03-01T09:00:00Z)")
	fs.StringVar(&req.Cron, "cron", "", "arm a timer that posts TEXT at the times of this cron `EXPRESSION` (\"0 9 * * 1-5\", @hourly)")
	cancel := fs.String("cancel", "", "cancel the timer `ID`")
	rest, err := cc.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("missing PID")
	}
	pid, text := rest[0], strings.Join(rest[1:], " ")
	arming := req.In != "" || req.At != "" || req.Cron != ""
	switch {
	case arming && *cancel != "":
		return usagef("--cancel arms nothing: give it alone")
	case arming:
		if strings.TrimSpace(text) == "" {
			return usagef("missing TEXT, the message the timer posts")
		}
		req.Message = text
		t, err := cc.client.ScheduleTimer(ctx, pid, req)
		if err != nil {
			return err
		}
		fmt.Fprintf(cc.stdout, "%s due %s\n", t.ID, t.Due.Local().Format(time.RFC3339))
		return nil
	case text != "":
		return usagef("unexpected argument %q (TEXT goes with --in, --at or --cron)", rest[1])
	case *cancel != "":
		if err := cc.client.CancelTimer(ctx, pid, *cancel); err != nil {
			return err
		}
		fmt.Fprintf(cc.stdout, "%s cancelled\n", *cancel)
		return nil
	}
	timers, err := cc.client.Timers(ctx, pid)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(cc.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDUE\tREPEATS\tMESSAGE")
	for _, t := range timers {
		msg := oneLine(t.Message)
		if t.Rejects != "" { // an approval's deadline posts no message
			msg = "(rejects call " + t.Rejects + " unless decided)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.Due.Local().Format(time.RFC3339), cmp.Or(t.Cron, "no"), msg)
	}
	return tw.Flush()
}
