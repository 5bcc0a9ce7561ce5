package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{nil, 0, false},
		{map[string]string{"Retry-After": "12"}, 12 * time.Second, true},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{map[string]string{"Retry-After": "-3"}, 0, false},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": epoch.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{map[string]string{"Retry-After": epoch.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After-Ms": "x", "Retry-After": "3"}, 3 * time.Second, true},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if tt.header == nil {
			h = nil
		}
		got, ok := RetryAfter(h, epoch)
		if got != tt.want || ok != tt.ok {
			t.Errorf("RetryAfter(%v) = %s, %v; want %s, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	limit := 4 * time.Second
	for attempt := 1; attempt <= 8; attempt++ {
		full := min(BaseWait<<(attempt-1), limit)
		for range 50 {
			if d := Backoff(attempt, limit); d < full/2 || d > full {
				t.Fatalf("Backoff(%d) = %s, want within [%s, %s]", attempt, d, full/2, full)
			}
		}
	}
}

func TestRetryAfterWithoutMs(t *testing.T) {
	t.Parallel()
	// A provider that sends only Retry-After (Anthropic) reads the same.
	h := http.Header{}
	h.Set("Retry-After", "7")
	if got, ok := RetryAfter(h, epoch); got != 7*time.Second || !ok {
		t.Errorf("RetryAfter = %s, %v; want 7s, true", got, ok)
	}
	h.Set("Retry-After-Ms", "-1") // unusable: falls back to Retry-After
	if got, ok := RetryAfter(h, epoch); got != 7*time.Second || !ok {
		t.Errorf("RetryAfter with a bad Retry-After-Ms = %s, %v; want 7s, true", got, ok)
	}
}

func TestBackoffCapped(t *testing.T) {
	t.Parallel()
	limit := 300 * time.Millisecond // below BaseWait
	for range 50 {
		if d := Backoff(1, limit); d < limit/2 || d > limit {
			t.Fatalf("Backoff(1, %s) = %s, want within [%s, %s]", limit, d, limit/2, limit)
		}
	}
}

func policy() Retry {
	return Retry{Provider: "test", MaxAttempts: 3, MaxWait: 10 * time.Second, Now: func() time.Time { return epoch }}.WithDefaults()
}

func TestWait(t *testing.T) {
	t.Parallel()
	unavailable := &Error{Provider: "test", Kind: ErrUnavailable, Message: "boom"}
	tests := []struct {
		name     string
		err      error
		attempt  int
		deadline time.Duration // from epoch; 0 means none
		want     time.Duration // exact wait; 0 means a back-off
		errHas   string        // the refusal; "" means a retry
	}{
		{name: "a retryable error is retried", err: unavailable, attempt: 1},
		{name: "wrapped, too", err: errors.Join(errors.New("ctx"), unavailable), attempt: 2},
		{name: "Retry-After is honoured", err: &Error{Kind: ErrRateLimited, RetryAfter: 3 * time.Second}, attempt: 1, want: 3 * time.Second},
		{name: "a plain error is not retried", err: errors.New("plain"), attempt: 1, errHas: "plain"},
		{name: "auth is not retried", err: &Error{Provider: "test", Kind: ErrAuth}, attempt: 1, errHas: "test: authentication failed"},
		{name: "bad request is not retried", err: &Error{Provider: "test", Kind: ErrBadRequest}, attempt: 1, errHas: "test: request refused"},
		{name: "a permanent rate limit is not retried", err: &Error{Provider: "test", Kind: ErrRateLimited, Permanent: true}, attempt: 1, errHas: "test: rate limited"},
		{name: "attempts run out", err: unavailable, attempt: 3, errHas: "gave up after 3 attempts"},
		{name: "Retry-After beyond MaxWait", err: &Error{Kind: ErrRateLimited, RetryAfter: time.Hour}, attempt: 1, errHas: "retry after 1h0m0s, longer than max_wait 10s"},
		{name: "no time before the deadline", err: &Error{Kind: ErrRateLimited, RetryAfter: 5 * time.Second}, attempt: 1, deadline: 4 * time.Second, errHas: "no time left to retry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if tt.deadline != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, epoch.Add(tt.deadline))
				defer cancel()
			}
			wait, final := policy().Wait(ctx, tt.err, tt.attempt)
			if tt.errHas != "" {
				if final == nil || !strings.Contains(final.Error(), tt.errHas) || !errors.Is(final, tt.err) {
					t.Fatalf("Wait = %s, %v; want a refusal wrapping %v and containing %q", wait, final, tt.err, tt.errHas)
				}
				return
			}
			if final != nil {
				t.Fatalf("Wait refused: %v", final)
			}
			if tt.want != 0 && wait != tt.want {
				t.Errorf("wait = %s, want %s", wait, tt.want)
			}
			if wait <= 0 || wait > policy().MaxWait {
				t.Errorf("wait = %s, want within (0, %s]", wait, policy().MaxWait)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		r      Retry
		errHas string
	}{
		{Retry{Provider: "p"}, ""},
		{Retry{Provider: "p", MaxAttempts: 20, MaxWait: time.Second}, ""},
		{Retry{Provider: "p", MaxAttempts: 21}, "p: max_attempts must be between 1 and 20"},
		{Retry{Provider: "p", MaxAttempts: -1}, "p: max_attempts must be between 1 and 20"},
		{Retry{Provider: "p", MaxWait: -1}, "p: max_wait must not be negative"},
	}
	for _, tt := range tests {
		err := tt.r.Validate()
		if (err == nil) != (tt.errHas == "") || (err != nil && !strings.Contains(err.Error(), tt.errHas)) {
			t.Errorf("%+v.Validate() = %v, want %q", tt.r, err, tt.errHas)
		}
	}
	r := Retry{}.WithDefaults()
	if r.MaxAttempts != DefaultMaxAttempts || r.MaxWait != DefaultMaxWait || r.Now == nil || r.Sleep == nil {
		t.Errorf("WithDefaults left zero fields: %+v", r)
	}
}
