package tools

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCallerContext(t *testing.T) {
	t.Parallel()
	if c, ok := CallerFrom(context.Background()); ok {
		t.Errorf("CallerFrom(empty context) = %+v, true", c)
	}
	ctx := WithCaller(context.Background(), testCaller)
	got, ok := CallerFrom(ctx)
	if !ok {
		t.Fatal("CallerFrom: no caller")
	}
	if diff := cmp.Diff(testCaller, got); diff != "" {
		t.Errorf("CallerFrom (-want +got):\n%s", diff)
	}
	// A derived context keeps the caller; a nested WithCaller replaces it.
	child := Caller{ProcessID: "p-child", Recipe: "marvin-worker", TurnID: "turn-1", Depth: 2}
	ctx2, cancel := context.WithCancel(WithCaller(ctx, child))
	defer cancel()
	if got, _ := CallerFrom(ctx2); got != child {
		t.Errorf("nested CallerFrom = %+v, want %+v", got, child)
	}
	if got, _ := CallerFrom(ctx); got != testCaller {
		t.Errorf("outer context changed: %+v", got)
	}
}

func TestCallerOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ctx  context.Context
		ok   bool
	}{
		{"present", callerCtx(), true},
		{"absent", context.Background(), false},
		{"no process id", WithCaller(context.Background(), Caller{Recipe: "arthur"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := callerOf(tt.ctx, SpawnWorker)
			if tt.ok {
				if err != nil {
					t.Errorf("callerOf: %v", err)
				}
				return
			}
			if err == nil || err.Error() != "spawn_worker: no calling process" || !errors.Is(err, ErrNoCaller) {
				t.Errorf("callerOf error = %v, want spawn_worker: no calling process matching ErrNoCaller", err)
			}
		})
	}
}
