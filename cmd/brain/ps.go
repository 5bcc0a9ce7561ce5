package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/engine-brain/brain/api"
)

// psPage is how many processes `brain ps` asks for at a time.
const psPage = 100

// runPS lists the processes, or the workers of one, every page of them, as
// a table.
func runPS(ctx context.Context, cc *clientCall, args []string) error {
	fs := cc.flags()
	var f api.ProcessFilter
	fs.StringVar(&f.State, "state", "", "only processes in this `STATE`: READY, RUNNING, BLOCKED, PAUSED, DONE or FAILED")
	fs.StringVar(&f.Recipe, "recipe", "", "only instances of the recipe `NAME`")
	fs.StringVar(&f.Parent, "parent", "", "only the workers process `PID` started")
	rest, err := cc.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	var all []api.Process
	after := ""
	for {
		page, err := cc.client.ListProcesses(ctx, f, after, psPage)
		if err != nil {
			return err
		}
		all = append(all, page.Processes...)
		if page.Next == "" || page.Next == after {
			break
		}
		after = page.Next
	}
	writeProcessTable(cc.stdout, all, time.Now())
	return nil
}

// writeProcessTable prints processes as aligned columns; a worker's
// PARENT is the process that spawned it, INBOX the messages waiting for its
// next turn, TOKENS what its model calls have used (input/output).
func writeProcessTable(w io.Writer, ps []api.Process, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tRECIPE\tSTATE\tOWNER\tPARENT\tINBOX\tTOKENS\tAGE")
	for _, p := range ps {
		state := p.State
		if p.PausedFrom != "" {
			state += " (from " + p.PausedFrom + ")"
		}
		inbox := "-"
		if p.Inbox != nil {
			inbox = fmt.Sprint(*p.Inbox)
		}
		tokens := "-"
		if t := p.Tokens; t != nil {
			tokens = count(t.Input) + "/" + count(t.Output)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Recipe, state, cmp.Or(p.Owner, "-"), cmp.Or(p.Parent, "-"),
			inbox, tokens, age(now.Sub(p.CreatedAt)))
	}
	_ = tw.Flush()
}

// count prints a number of tokens short: 950, 12.3k, 4.1M.
func count(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}

// age prints a duration the way ps does: its largest unit only.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}
