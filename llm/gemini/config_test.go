package gemini

import (
	"strings"
	"testing"

	"github.com/engine-brain/brain/llm/llmtest"
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
		{name: "proxy base URL", cfg: Config{APIKey: testKey, BaseURL: "http://127.0.0.1:8080/gemini"}},
		{name: "no key", cfg: Config{}, errHas: "api_key is required (set GEMINI_API_KEY)"},
		{name: "key with a newline", cfg: Config{APIKey: testKey + "\n"}, errHas: "white space or control characters"},
		{name: "relative base URL", cfg: Config{APIKey: testKey, BaseURL: "generativelanguage.googleapis.com"}, errHas: "must be an absolute http or https URL"},
		{name: "base URL with the version path", cfg: Config{APIKey: testKey, BaseURL: "https://generativelanguage.googleapis.com/v1beta/"}, errHas: "leave out the version path"},
		{name: "base URL with /v1", cfg: Config{APIKey: testKey, BaseURL: "https://generativelanguage.googleapis.com/v1"}, errHas: "leave out the version path"},
		{name: "base URL with a query", cfg: Config{APIKey: testKey, BaseURL: "https://generativelanguage.googleapis.com?key=" + testKey}, errHas: "must have no query or fragment"},
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
				if c.maxTokens != 0 || !c.thoughts || c.retry.MaxAttempts != DefaultMaxAttempts || c.retry.MaxWait != DefaultMaxWait {
					t.Errorf("defaults not applied: max_tokens %d, thoughts %v, max_attempts %d, max_wait %s", c.maxTokens, c.thoughts, c.retry.MaxAttempts, c.retry.MaxWait)
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

// TestNoEnvironment checks that the SDK's variables do not reach a client:
// the key and base URL are the configuration's.
func TestNoEnvironment(t *testing.T) {
	t.Setenv("GOOGLE_API_KEY", "AIza-from-the-environment")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
	b := setup(t, Config{}, llmtest.Streamed(t, "text.sse"))
	if _, err := llmtest.Drain(t, t.Context(), b.client, llmtest.UserRequest("hi")); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	got := b.fake.Requests()
	if len(got) != 1 || got[0].Header.Get("x-goog-api-key") != testKey {
		t.Fatalf("requests %d, key header %q; want one request with the configured key", len(got), got[0].Header.Get("x-goog-api-key"))
	}
}
