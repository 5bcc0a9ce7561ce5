package main

import (
	"context"
	"fmt"
	"io"

	"go.uber.org/zap"
)

// runServe will run a node with its HTTP API. Until the runtime lands it
// says so plainly instead of pretending to serve.
func runServe(_ context.Context, _ []string, log *zap.Logger, stderr io.Writer) int {
	log.Error("brain serve is not yet available: the runtime (Redis inbox, leases, HTTP API) is still being built")
	fmt.Fprintln(stderr, "brain serve: not yet available. Meanwhile: `brain recipe lint recipes/*.yaml`, `brain recipe schema`.")
	return 1
}
