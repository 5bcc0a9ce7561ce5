package anthropic

import (
	"errors"
	"fmt"
	"strings"

	"github.com/engine-brain/brain/llm/provider"
)

// Defaults of Config.
const (
	DefaultBaseURL     = "https://api.anthropic.com"
	DefaultMaxTokens   = 4096
	DefaultMaxAttempts = provider.DefaultMaxAttempts
	DefaultMaxWait     = provider.DefaultMaxWait
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
	// Options are the retries, the HTTP client, the log and the clock.
	provider.Options
}

// validate reports the first problem of c. Messages name the setting and
// never echo the key.
func (c *Config) validate() error {
	if c.BaseURL != "" {
		u, err := provider.BaseURL(name, c.BaseURL, "https://api.anthropic.com")
		if err != nil {
			return err
		}
		if strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v1") {
			return fmt.Errorf("anthropic: base_url %q: leave out the /v1 version path (the client adds /v1/messages)", u.Redacted())
		}
	}
	if c.APIKey == "" {
		return errors.New("anthropic: api_key is required (set ANTHROPIC_API_KEY)")
	}
	if err := provider.CheckKey(name, c.APIKey); err != nil {
		return err
	}
	if c.MaxTokens < 0 {
		return fmt.Errorf("anthropic: max_tokens must be positive, or 0 for the default %d (got %d)", DefaultMaxTokens, c.MaxTokens)
	}
	return c.retry().Validate()
}

// retry is the retry policy c configures, defaults not yet filled in.
func (c *Config) retry() provider.Retry {
	return c.Options.Retry(name)
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	c.Options = c.Options.WithDefaults()
	return c
}
