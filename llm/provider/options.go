package provider

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// Options are the settings every adapter shares: how it retries, the HTTP
// client it sends with, its log and, for tests, its clock. Adapters embed
// them in their Config; the zero value of each means its default.
type Options struct {
	// MaxAttempts bounds the attempts of one call, the first included
	// (1 means no retry). Zero means DefaultMaxAttempts.
	MaxAttempts int
	// MaxWait bounds one wait between attempts. A Retry-After asking for
	// longer ends the retries at once. Zero means DefaultMaxWait.
	MaxWait time.Duration
	// HTTPClient sends the requests. Nil means a client without an overall
	// timeout: streams are long, and the call's context bounds them.
	HTTPClient *http.Client
	// Logger receives retry notices (never the key nor payloads). Nil means
	// no logging.
	Logger *zap.Logger

	// Now and Sleep are the clock, injected by tests so that no test sleeps.
	// Now reads Retry-After dates and checks a wait against the context's
	// deadline; Sleep waits between attempts and must return early, with
	// ctx.Err(), when ctx is done. Nil means time.Now and a timer.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Retry is the retry policy of o for the adapter named provider, defaults
// not filled in (see Retry.WithDefaults).
func (o Options) Retry(provider string) Retry {
	return Retry{Provider: provider, MaxAttempts: o.MaxAttempts, MaxWait: o.MaxWait, Now: o.Now, Sleep: o.Sleep}
}

// WithDefaults returns o with its zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	r := o.Retry("").WithDefaults()
	o.MaxAttempts, o.MaxWait, o.Now, o.Sleep = r.MaxAttempts, r.MaxWait, r.Now, r.Sleep
	return o
}
