package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/engine-brain/brain/internal/ctxtime"
)

// Defaults of the retry policy.
const (
	DefaultMaxAttempts = 4
	DefaultMaxWait     = time.Minute
)

// BaseWait is the back-off before the second attempt; it doubles with each
// further attempt, up to Retry.MaxWait.
const BaseWait = 500 * time.Millisecond

// Retry is the retry policy of one adapter. Its zero fields mean their
// defaults once WithDefaults has filled them in.
type Retry struct {
	// Provider names the adapter in messages, e.g. "openai".
	Provider string
	// MaxAttempts bounds the attempts of one call, the first included
	// (1 means no retry).
	MaxAttempts int
	// MaxWait bounds one wait between attempts. A Retry-After asking for
	// longer ends the retries at once.
	MaxWait time.Duration
	// Now reads Retry-After dates and checks a wait against the context's
	// deadline.
	Now func() time.Time
	// Sleep waits between attempts and must return early, with ctx.Err(),
	// when ctx is done.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Validate reports a MaxAttempts or MaxWait out of range, in the words of
// the adapter's configuration (max_attempts, max_wait).
func (r Retry) Validate() error {
	if r.MaxAttempts < 0 || r.MaxAttempts > 20 {
		return fmt.Errorf("%s: max_attempts must be between 1 and 20, or 0 for the default %d (got %d)", r.Provider, DefaultMaxAttempts, r.MaxAttempts)
	}
	if r.MaxWait < 0 {
		return fmt.Errorf("%s: max_wait must not be negative (got %s)", r.Provider, r.MaxWait)
	}
	return nil
}

// WithDefaults returns r with its zero fields set to DefaultMaxAttempts,
// DefaultMaxWait, time.Now and a timer.
func (r Retry) WithDefaults() Retry {
	if r.MaxAttempts == 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.MaxWait == 0 {
		r.MaxWait = DefaultMaxWait
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Sleep == nil {
		r.Sleep = ctxtime.Sleep
	}
	return r
}

// Wait says how long to wait before attempt+1 after err ended attempt; or,
// when there is to be no retry, the error to return (err, with the reason
// when it is not err's own). Only a retryable *Error is retried, at most
// MaxAttempts times in all, never for longer than MaxWait at once and never
// past ctx's deadline.
func (r Retry) Wait(ctx context.Context, err error, attempt int) (wait time.Duration, final error) {
	var e *Error
	if !errors.As(err, &e) || !e.Retryable() {
		return 0, err
	}
	if attempt >= r.MaxAttempts {
		if attempt == 1 {
			return 0, err
		}
		return 0, fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
	}
	wait = Backoff(attempt, r.MaxWait)
	if e.RetryAfter > 0 {
		if e.RetryAfter > r.MaxWait {
			return 0, fmt.Errorf("%w (the provider asked to retry after %s, longer than max_wait %s)", err, e.RetryAfter.Round(time.Second), r.MaxWait)
		}
		wait = e.RetryAfter
	}
	if deadline, has := ctx.Deadline(); has && !r.Now().Add(wait).Before(deadline) {
		return 0, fmt.Errorf("%w (no time left to retry before the call's deadline)", err)
	}
	return wait, nil
}

// Backoff is the wait after the attempt-th failure: exponential from
// BaseWait, capped at limit, with "equal jitter" (a random point in the
// upper half) so that clients failing together do not retry together.
func Backoff(attempt int, limit time.Duration) time.Duration {
	d := BaseWait
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return half + rand.N(half+1)
}

// RetryAfter reads the wait a response asks for: Retry-After-Ms (OpenAI's
// millisecond variant, which other providers do not send) first, then
// Retry-After in seconds or as an HTTP date. ok is false when neither header
// is usable.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
