package main

import (
	"context"
	"fmt"
	"strings"
)

// control returns the command that fires an operator action (pause,
// resume, stop, retry) on a process and prints its new state.
func control(action string) func(context.Context, *clientCall, []string) error {
	return func(ctx context.Context, cc *clientCall, args []string) error {
		pid, err := onePID(cc, args)
		if err != nil {
			return err
		}
		p, err := cc.client.Control(ctx, pid, action)
		if err != nil {
			return err
		}
		fmt.Fprintf(cc.stdout, "%s %s\n", p.ID, p.State)
		return nil
	}
}

// runRm deletes processes and everything they have, in order, saying what
// each was; it stops at the first the server refuses.
func runRm(ctx context.Context, cc *clientCall, args []string) error {
	pids, err := cc.parse(cc.flags(), args)
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return usagef("missing PID")
	}
	for _, pid := range pids {
		p, err := cc.client.DeleteProcess(ctx, pid)
		if err != nil {
			return err
		}
		fmt.Fprintf(cc.stdout, "%s deleted (was %s)", p.ID, p.State)
		if len(p.Workers) > 0 {
			fmt.Fprintf(cc.stdout, " with its workers %s", strings.Join(p.Workers, ", "))
		}
		fmt.Fprintln(cc.stdout)
	}
	return nil
}

// onePID returns the one argument of a command that takes a process id.
func onePID(cc *clientCall, args []string) (string, error) {
	rest, err := cc.parse(cc.flags(), args)
	if err != nil {
		return "", err
	}
	switch {
	case len(rest) == 0:
		return "", usagef("missing PID")
	case len(rest) > 1:
		return "", usagef("unexpected argument %q", rest[1])
	}
	return rest[0], nil
}
