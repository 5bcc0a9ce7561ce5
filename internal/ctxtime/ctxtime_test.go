package ctxtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/engine-brain/brain/internal/ctxtime"
)

func TestSleep(t *testing.T) {
	if err := ctxtime.Sleep(t.Context(), time.Millisecond); err != nil {
		t.Errorf("Sleep(1ms) = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// A cancelled context ends an hour's sleep at once.
	if err := ctxtime.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(an hour) on a cancelled context = %v, want context.Canceled", err)
	}
}
