package anthropic

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// baseWait is the back-off before the second attempt; it doubles with each
// further attempt, up to Config.MaxWait.
const baseWait = 500 * time.Millisecond

// retryWait says how long to wait before attempt+1 after err ended attempt;
// or, when there is to be no retry, the error to return (err, with the reason
// when it is not err's own).
func (c *Client) retryWait(ctx context.Context, err error, attempt int) (wait time.Duration, final error) {
	var e *Error
	if !errors.As(err, &e) || !e.Retryable() {
		return 0, err
	}
	if attempt >= c.maxAttempts {
		if attempt == 1 {
			return 0, err
		}
		return 0, fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
	}
	wait = backoff(attempt, c.maxWait)
	if e.RetryAfter > 0 {
		if e.RetryAfter > c.maxWait {
			return 0, fmt.Errorf("%w (the provider asked to retry after %s, longer than max_wait %s)", err, e.RetryAfter.Round(time.Second), c.maxWait)
		}
		wait = e.RetryAfter
	}
	if deadline, has := ctx.Deadline(); has && !c.now().Add(wait).Before(deadline) {
		return 0, fmt.Errorf("%w (no time left to retry before the call's deadline)", err)
	}
	return wait, nil
}

// retryable reports whether err is an *Error that another attempt may cure.
func retryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable()
}

// backoff is the wait after the attempt-th failure: exponential from
// baseWait, capped at limit, with "equal jitter" (a random point in the upper
// half) so that clients failing together do not retry together.
func backoff(attempt int, limit time.Duration) time.Duration {
	d := baseWait
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return half + rand.N(half+1)
}

// retryAfter reads the wait a response asks for in Retry-After, in seconds
// or as an HTTP date. ok is false when the header is absent or unusable.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
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
