package openai

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/llm/provider"
)

// Defaults of Config.
const (
	DefaultBaseURL     = "https://api.openai.com/v1"
	DefaultMaxAttempts = provider.DefaultMaxAttempts
	DefaultMaxWait     = provider.DefaultMaxWait
)

// Config configures a Client. The zero value of each optional field means
// its default.
type Config struct {
	// APIKey is sent as a bearer token. It is required for the OpenAI API
	// (BaseURL empty) and optional for a compatible server that needs none.
	// It never appears in an error or a log line.
	APIKey string
	// BaseURL is the root of an OpenAI-compatible API, including its version
	// path, e.g. http://127.0.0.1:11434/v1. Empty means DefaultBaseURL.
	BaseURL string
	// Model is used when a request names none (llm.Params.Model).
	Model string
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

// validate reports the first problem of c. Messages name the setting and
// never echo the key.
func (c *Config) validate() error {
	if c.BaseURL != "" {
		if _, err := provider.BaseURL(name, c.BaseURL, "http://127.0.0.1:11434/v1"); err != nil {
			return err
		}
	}
	if c.APIKey == "" && c.BaseURL == "" {
		return errors.New("openai: api_key is required for the OpenAI API (set OPENAI_API_KEY); only a server reached through base_url may go without one")
	}
	if err := provider.CheckKey(name, c.APIKey); err != nil {
		return err
	}
	return c.retry().Validate()
}

// retry is the retry policy c configures, defaults not yet filled in.
func (c *Config) retry() provider.Retry {
	return provider.Retry{Provider: name, MaxAttempts: c.MaxAttempts, MaxWait: c.MaxWait, Now: c.Now, Sleep: c.Sleep}
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	r := c.retry().WithDefaults()
	c.MaxAttempts, c.MaxWait, c.Now, c.Sleep = r.MaxAttempts, r.MaxWait, r.Now, r.Sleep
	return c
}
