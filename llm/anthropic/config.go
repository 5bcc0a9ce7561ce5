package anthropic

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
	DefaultBaseURL     = "https://api.anthropic.com"
	DefaultMaxTokens   = 4096
	DefaultMaxAttempts = 4
	DefaultMaxWait     = time.Minute
)

// Config configures a Client. The zero value of each optional field means
// its default.
type Config struct {
	// APIKey authenticates every request. Required. It never appears in an
	// error or a log line.
	APIKey string
	// BaseURL is the root of the API, without the /v1 version path, e.g.
	// a proxy's http://127.0.0.1:8080. Empty means DefaultBaseURL.
	BaseURL string
	// Model is used when a request names none (llm.Params.Model).
	Model string
	// MaxTokens bounds an answer when a request sets no bound
	// (llm.Params.MaxTokens): the Messages API requires one. Zero means
	// DefaultMaxTokens.
	MaxTokens int
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
			return errors.New("anthropic: base_url is not a valid URL; use e.g. https://api.anthropic.com")
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("anthropic: base_url %q: must be an absolute http or https URL, e.g. https://api.anthropic.com", u.Redacted())
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("anthropic: base_url %q: must have no query or fragment", u.Redacted())
		}
		if strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v1") {
			return fmt.Errorf("anthropic: base_url %q: leave out the /v1 version path (the client adds /v1/messages)", u.Redacted())
		}
	}
	if c.APIKey == "" {
		return errors.New("anthropic: api_key is required (set ANTHROPIC_API_KEY)")
	}
	if strings.IndexFunc(c.APIKey, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return errors.New("anthropic: api_key contains white space or control characters (a trailing newline from a file?)")
	}
	if c.MaxTokens < 0 {
		return fmt.Errorf("anthropic: max_tokens must be positive, or 0 for the default %d (got %d)", DefaultMaxTokens, c.MaxTokens)
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > 20 {
		return fmt.Errorf("anthropic: max_attempts must be between 1 and 20, or 0 for the default %d (got %d)", DefaultMaxAttempts, c.MaxAttempts)
	}
	if c.MaxWait < 0 {
		return fmt.Errorf("anthropic: max_wait must not be negative (got %s)", c.MaxWait)
	}
	return nil
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
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
