package provider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/llm"
)

// script is an Attempt that plays results in order.
type script struct {
	results []result
	n       int
}

type result struct {
	yielded, stopped bool
	err              error
}

func (s *script) attempt() (yielded, stopped bool, err error) {
	r := s.results[s.n]
	s.n++
	return r.yielded, r.stopped, r.err
}

func TestStream(t *testing.T) {
	t.Parallel()
	unavailable := &Error{Provider: "test", Kind: ErrUnavailable, Message: "boom"}
	tests := []struct {
		name     string
		results  []result
		attempts int
		sleeps   int
		errHas   string // of the error yielded; "" means none
	}{
		{name: "success", results: []result{{yielded: true}}, attempts: 1},
		{name: "consumer stops", results: []result{{yielded: true, stopped: true}}, attempts: 1},
		{name: "retried, then success", results: []result{{err: unavailable}, {err: unavailable}, {yielded: true}}, attempts: 3, sleeps: 2},
		{name: "gives up", results: []result{{err: unavailable}, {err: unavailable}, {err: unavailable}}, attempts: 3, sleeps: 2, errHas: "gave up after 3 attempts"},
		{name: "not retried once parts went out", results: []result{{yielded: true, err: unavailable}}, attempts: 1, errHas: "not retried: part of the answer was already delivered"},
		{name: "not retryable", results: []result{{err: &Error{Provider: "test", Kind: ErrAuth}}}, attempts: 1, errHas: "test: authentication failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sleeps, retries := 0, 0
			r := policy()
			r.Sleep = func(context.Context, time.Duration) error { sleeps++; return nil }
			s := &script{results: tt.results}
			var errs []error
			ctx := WithRetryObserver(context.Background(), func(int, error) { retries++ })
			r.Stream(ctx, zap.NewNop(), s.attempt, func(_ llm.Part, err error) bool {
				errs = append(errs, err)
				return true
			})
			if s.n != tt.attempts || sleeps != tt.sleeps || retries != tt.sleeps {
				t.Errorf("attempts %d, sleeps %d, retries observed %d; want %d, %d, %d", s.n, sleeps, retries, tt.attempts, tt.sleeps, tt.sleeps)
			}
			switch {
			case tt.errHas == "" && len(errs) != 0:
				t.Errorf("yielded %v, want nothing", errs)
			case tt.errHas != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.errHas)):
				t.Errorf("yielded %v, want one error containing %q", errs, tt.errHas)
			}
		})
	}
}

func TestStreamCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	r := policy()
	r.Sleep = func(ctx context.Context, _ time.Duration) error {
		cancel()
		return ctx.Err()
	}
	s := &script{results: []result{{err: &Error{Kind: ErrUnavailable}}}}
	var got error
	r.Stream(ctx, zap.NewNop(), s.attempt, func(_ llm.Part, err error) bool { got = err; return true })
	if !errors.Is(got, context.Canceled) || !strings.HasPrefix(got.Error(), "test: ") {
		t.Errorf("err = %v, want test: context canceled", got)
	}
}
