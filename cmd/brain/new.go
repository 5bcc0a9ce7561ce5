package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/engine-brain/brain/api"
)

// runNew creates a process and prints its id and state.
func runNew(ctx context.Context, cc *clientCall, args []string) error {
	rest, err := cc.parse(cc.flags(), args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("missing RECIPE; `curl $BRAIN_URL/v1/recipes` lists them, `default` is a plain chat")
	}
	// A key of its own, as brain send's: tried again, the create makes the
	// process once.
	p, err := cc.client.CreateProcess(ctx, api.CreateRequest{Recipe: rest[0], Input: strings.Join(rest[1:], " "), IdempotencyKey: "cli-" + rand.Text()})
	if err != nil {
		return err
	}
	fmt.Fprintf(cc.stdout, "%s %s\n", p.ID, p.State)
	return nil
}
