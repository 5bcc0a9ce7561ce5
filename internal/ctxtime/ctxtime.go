// Package ctxtime waits no longer than a context lets it: the one home of
// a timer raced against ctx.Done.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits d, or returns ctx's error as soon as ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
