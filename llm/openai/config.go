package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"go.uber.org/zap"
)

// Defaults of Config.
const (
	DefaultBaseURL     = "https://api.openai.com/v1"
	DefaultMaxAttempts = 4
	DefaultMaxWait     = time.Minute
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
		u, err := url.Parse(c.BaseURL)
		if err != nil {
			// url's error repeats the URL, which may carry a password.
			return errors.New("openai: base_url is not a valid URL; use e.g. http://127.0.0.1:11434/v1")
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("openai: base_url %q: must be an absolute http or https URL, e.g. http://127.0.0.1:11434/v1", u.Redacted())
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("openai: base_url %q: must have no query or fragment", u.Redacted())
		}
	}
	if c.APIKey == "" && c.BaseURL == "" {
		return errors.New("openai: api_key is required for the OpenAI API (set OPENAI_API_KEY); only a server reached through base_url may go without one")
	}
	if strings.IndexFunc(c.APIKey, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return errors.New("openai: api_key contains white space or control characters (a trailing newline from a file?)")
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > 20 {
		return fmt.Errorf("openai: max_attempts must be between 1 and 20, or 0 for the default %d (got %d)", DefaultMaxAttempts, c.MaxAttempts)
	}
	if c.MaxWait < 0 {
		return fmt.Errorf("openai: max_wait must not be negative (got %s)", c.MaxWait)
	}
	return nil
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.MaxWait == 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	return c
}

// sleep waits d, or less when ctx is done first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
