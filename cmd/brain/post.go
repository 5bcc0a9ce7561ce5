package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
)

// runSend posts a user message and prints its inbox id.
func runSend(ctx context.Context, cc *clientCall, args []string) error {
	pid, text, err := cc.message(args)
	if err != nil {
		return err
	}
	// A key of its own makes the message safe to send again: Send tries
	// again while the server cannot store it just now, and the server
	// stores it once however often it arrives.
	id, err := cc.client.Send(ctx, pid, text, "cli-"+rand.Text())
	if err != nil {
		return err
	}
	fmt.Fprintln(cc.stdout, id)
	return nil
}

// runSteer posts an operator message and prints its inbox id.
func runSteer(ctx context.Context, cc *clientCall, args []string) error {
	pid, text, err := cc.message(args)
	if err != nil {
		return err
	}
	id, err := cc.client.Steer(ctx, pid, text, "cli-"+rand.Text()) // as runSend
	if err != nil {
		return err
	}
	fmt.Fprintln(cc.stdout, id)
	return nil
}

// message reads PID TEXT...: the words of the text are joined with spaces,
// so quoting it is optional.
func (cc *clientCall) message(args []string) (pid, text string, err error) {
	rest, err := cc.parse(cc.flags(), args)
	if err != nil {
		return "", "", err
	}
	switch {
	case len(rest) == 0:
		return "", "", usagef("missing PID and TEXT")
	case len(rest) == 1:
		return "", "", usagef("missing TEXT")
	}
	text = strings.Join(rest[1:], " ")
	if strings.TrimSpace(text) == "" {
		return "", "", usagef("TEXT is empty")
	}
	return rest[0], text, nil
}
