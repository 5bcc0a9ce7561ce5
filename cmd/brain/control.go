package main

import (
	"context"
	"fmt"
)

// control returns the command that fires an operator action (pause,
// resume, stop, retry) on a process and prints its new state.
func control(action string) func(context.Context, *clientCall, []string) error {
	return func(ctx context.Context, cc *clientCall, args []string) error {
		rest, err := cc.parse(cc.flags(), args)
		if err != nil {
			return err
		}
		switch {
		case len(rest) == 0:
			return usagef("missing PID")
		case len(rest) > 1:
			return usagef("unexpected argument %q", rest[1])
		}
		p, err := cc.client.Control(ctx, rest[0], action)
		if err != nil {
			return err
		}
		fmt.Fprintf(cc.stdout, "%s %s\n", p.ID, p.State)
		return nil
	}
}
