package openai

import (
	"errors"

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
	// Options are the retries, the HTTP client, the log and the clock.
	provider.Options
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
