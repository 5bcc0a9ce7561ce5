package anthropic

import (
	"strings"
	"testing"

	"github.com/engine-brain/brain/llm/provider"
)

// TestConfigValidate checks the messages of invalid configurations, and
// that none repeats the key.
func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cfg    Config
		errHas string // "" for a valid configuration
	}{
		{name: "key alone", cfg: Config{APIKey: testKey}},
		{name: "proxy base URL", cfg: Config{APIKey: testKey, BaseURL: "http://127.0.0.1:8080/anthropic"}},
		{name: "no key", cfg: Config{}, errHas: "api_key is required (set ANTHROPIC_API_KEY)"},
		{name: "key with a newline", cfg: Config{APIKey: testKey + "\n"}, errHas: "white space or control characters"},
		{name: "relative base URL", cfg: Config{APIKey: testKey, BaseURL: "api.anthropic.com"}, errHas: "must be an absolute http or https URL"},
		{name: "base URL with the version path", cfg: Config{APIKey: testKey, BaseURL: "https://api.anthropic.com/v1/"}, errHas: "leave out the /v1 version path"},
		{name: "base URL with a query", cfg: Config{APIKey: testKey, BaseURL: "https://api.anthropic.com?x=1"}, errHas: "must have no query or fragment"},
		{name: "negative max tokens", cfg: Config{APIKey: testKey, MaxTokens: -1}, errHas: "max_tokens must be positive"},
		{name: "too many attempts", cfg: Config{APIKey: testKey, Options: provider.Options{MaxAttempts: 21}}, errHas: "max_attempts must be between 1 and 20"},
		{name: "negative wait", cfg: Config{APIKey: testKey, Options: provider.Options{MaxWait: -1}}, errHas: "max_wait must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(tt.cfg)
			if tt.errHas == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if c.maxTokens != DefaultMaxTokens || c.retry.MaxAttempts != DefaultMaxAttempts || c.retry.MaxWait != DefaultMaxWait {
					t.Errorf("defaults not applied: max_tokens %d, max_attempts %d, max_wait %s", c.maxTokens, c.retry.MaxAttempts, c.retry.MaxWait)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error %v, want one containing %q", err, tt.errHas)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error %q carries the key", err)
			}
		})
	}
}
