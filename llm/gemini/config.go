package gemini

import (
	"errors"
	"fmt"
	"strings"

	"github.com/engine-brain/brain/llm/provider"
)

// Defaults of Config.
const (
	DefaultBaseURL     = "https://generativelanguage.googleapis.com"
	DefaultMaxAttempts = provider.DefaultMaxAttempts
	DefaultMaxWait     = provider.DefaultMaxWait
)

// apiVersion is the version path the SDK puts after the base URL.
const apiVersion = "v1beta"

// Config configures a Client. The zero value of each optional field means
// its default.
type Config struct {
	// APIKey authenticates every request (header x-goog-api-key). Required.
	// It never appears in an error or a log line.
	APIKey string
	// BaseURL is the root of the API, without the /v1beta version path,
	// e.g. a proxy's http://127.0.0.1:8080. Empty means DefaultBaseURL.
	BaseURL string
	// Model is used when a request names none (llm.Params.Model), e.g.
	// "gemini-2.5-flash".
	Model string
	// MaxTokens bounds an answer when a request sets no bound
	// (llm.Params.MaxTokens). Zero sends no bound: the model's own applies.
	MaxTokens int
	// OmitThoughts stops asking for thought summaries
	// (thinkingConfig.includeThoughts), for models that refuse the setting.
	// By default they are asked for and arrive as reasoning parts.
	OmitThoughts bool
	// Options are the retries, the HTTP client, the log and the clock.
	// (Google's 429 errors carry a retryDelay, read as a Retry-After.)
	provider.Options
}

// validate reports the first problem of c. Messages name the setting and
// never echo the key.
func (c *Config) validate() error {
	if c.BaseURL != "" {
		u, err := provider.BaseURL(name, c.BaseURL, DefaultBaseURL)
		if err != nil {
			return err
		}
		path := strings.TrimSuffix(u.Path, "/")
		if strings.HasSuffix(path, "/"+apiVersion) || strings.HasSuffix(path, "/v1") {
			return fmt.Errorf("gemini: base_url %q: leave out the version path (the client adds /%s/models/...)", u.Redacted(), apiVersion)
		}
	}
	if c.APIKey == "" {
		return errors.New("gemini: api_key is required (set GEMINI_API_KEY)")
	}
	if err := provider.CheckKey(name, c.APIKey); err != nil {
		return err
	}
	if c.MaxTokens < 0 {
		return fmt.Errorf("gemini: max_tokens must be positive, or 0 for the model's own bound (got %d)", c.MaxTokens)
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
	c.Options = c.Options.WithDefaults()
	return c
}
