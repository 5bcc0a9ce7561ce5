package main

import (
	"cmp"
	"context"
	"fmt"
	"text/tabwriter"
	"time"
)

// runInbox lists the messages waiting in a process's inbox, oldest first
// (operator): what its next turn drains.
func runInbox(ctx context.Context, cc *clientCall, args []string) error {
	pid, err := onePID(cc, args)
	if err != nil {
		return err
	}
	msgs, err := cc.client.Inbox(ctx, pid)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(cc.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tFROM\tAT\tCONTENT")
	for _, m := range msgs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.Kind, cmp.Or(m.From, "-"), m.At.Local().Format(time.RFC3339), clip(m.Content))
	}
	return tw.Flush()
}
