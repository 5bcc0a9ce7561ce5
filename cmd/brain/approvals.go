package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/conversation"
)

// runApprovals lists the tool calls waiting for a decision the caller may
// take, oldest first.
func runApprovals(ctx context.Context, cc *clientCall, args []string) error {
	rest, err := cc.parse(cc.flags(), args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	list, err := cc.client.Approvals(ctx)
	if err != nil {
		return err
	}
	writeApprovalTable(cc.stdout, list, time.Now())
	return nil
}

// writeApprovalTable prints waiting calls as aligned columns: WAITING is
// how long since the model asked, DEADLINE how long until the call is
// rejected unless decided.
func writeApprovalTable(w io.Writer, list []api.PendingApproval, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROCESS\tCALL\tTOOL\tBY\tWAITING\tDEADLINE\tARGUMENTS")
	for _, a := range list {
		deadline := "-"
		switch {
		case a.Deadline == nil:
		case a.Deadline.After(now):
			deadline = "in " + age(a.Deadline.Sub(now))
		default:
			deadline = "passed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Process, a.CallID, a.Tool, a.By, age(now.Sub(a.RequestedAt)), deadline, clip(string(a.Arguments)))
	}
	_ = tw.Flush()
}

// decide returns the command that posts decision d on a call waiting for
// approval. A rejection needs a reason: the model reads it as the call's
// result, and without one can only guess why.
func decide(d conversation.Decision) func(context.Context, *clientCall, []string) error {
	return func(ctx context.Context, cc *clientCall, args []string) error {
		fs := cc.flags()
		reason := fs.String("reason", "", "why, in a `TEXT` the model reads with the call's result")
		rest, err := cc.parse(fs, args)
		if err != nil {
			return err
		}
		switch {
		case len(rest) == 0:
			return usagef("missing PID and CALL (brain approvals lists them)")
		case len(rest) == 1:
			return usagef("missing CALL (brain approvals lists them)")
		case len(rest) > 2:
			return usagef("unexpected argument %q (quote the reason: --reason \"...\")", rest[2])
		case d == conversation.Reject && strings.TrimSpace(*reason) == "":
			return usagef("missing --reason: say why the call is rejected; the model reads it")
		}
		pid, call := rest[0], rest[1]
		// A key of its own makes the decision safe to send again, as
		// runSend's message.
		req := api.ApprovalRequest{Decision: d, Reason: *reason}
		if _, err := cc.client.Decide(ctx, pid, call, req, "cli-"+rand.Text()); err != nil {
			return err
		}
		done := "approved"
		if d == conversation.Reject {
			done = "rejected"
		}
		fmt.Fprintf(cc.stdout, "%s of %s %s\n", call, pid, done)
		return nil
	}
}
