package providers

import (
	"fmt"
	"strings"
	"testing"
)

// TestSecretNeverPrints: a key in a Config stays out of %v, %+v, %#v, %s
// and %q.
func TestSecretNeverPrints(t *testing.T) {
	t.Parallel()
	p := Config{Name: "gpt", APIKey: "sk-very-secret"}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		if out := fmt.Sprintf(verb, p); strings.Contains(out, "sk-very-secret") {
			t.Errorf("%s shows the key: %s", verb, out)
		}
	}
}

// TestConfigCheck: Check refuses each wrong field of a Config a program
// builds, with the field's name, and takes those the adapters take.
func TestConfigCheck(t *testing.T) {
	t.Parallel()
	const local = "http://127.0.0.1:11434/v1"
	for _, tt := range []struct {
		name string
		p    Config
		want []string // in the error; none: no error
	}{
		{name: "empty", p: Config{}, want: []string{"name: required", "type: required"}},
		{name: "reserved name", p: Config{Name: "default", Type: TypeOpenAI, BaseURL: local}, want: []string{`name: "default" is reserved`}},
		{name: "bad name", p: Config{Name: "My Server", Type: TypeOpenAI, BaseURL: local}, want: []string{`name: want lowercase letters, digits, - and _`}},
		{name: "unknown type", p: Config{Name: "mis", Type: "mistral", APIKey: "m-1"}, want: []string{`type: unknown provider type "mistral"; want openai`}},
		{name: "base_url with a password", p: Config{Name: "b", Type: TypeOpenAI, BaseURL: "http://me:hunter2@127.0.0.1/v1"}, want: []string{"base_url: must not hold a user or password"}},
		{name: "base_url not absolute", p: Config{Name: "a", Type: TypeOpenAI, BaseURL: "127.0.0.1:11434"}, want: []string{"base_url: "}},
		{name: "context window too small", p: Config{Name: "f", Type: TypeOpenAI, BaseURL: local, MaxContextTokens: 512}, want: []string{"max_context_tokens: want the models' context window in tokens, a whole number from 1000 to 10000000, or 0 for the recipes' default (got 512)"}},
		{name: "openai without base_url nor key", p: Config{Name: "ollama", Type: TypeOpenAI}, want: []string{"base_url: required for an OpenAI-compatible server"}},
		{name: "max_attempts out of range", p: Config{Name: "d", Type: TypeOpenAI, BaseURL: local, MaxAttempts: 50}, want: []string{"provider d: openai: max_attempts must be between 1 and 20"}},
		{name: "a key with white space", p: Config{Name: "gpt", Type: TypeOpenAI, APIKey: "sk-very secret"}, want: []string{"api_key contains white space"}},
		{name: "anthropic without a key", p: Config{Name: "claude", Type: TypeAnthropic}, want: []string{"provider claude: anthropic: api_key is required"}},

		{name: "OpenAI's API with a key a program read", p: Config{Name: "gpt", Type: TypeOpenAI, APIKey: "sk-x"}},
		{name: "a local server", p: Config{Name: "ollama", Type: TypeOpenAI, BaseURL: local, Model: "llama3.2", MaxAttempts: 1, MaxContextTokens: 6000}},
		{name: "anthropic", p: Config{Name: "claude", Type: TypeAnthropic, APIKeyEnv: "ANTHROPIC_API_KEY", APIKey: "sk-ant"}},
		{name: "gemini", p: Config{Name: "google", Type: TypeGemini, APIKey: "AIza-test"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.p.Check()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Check: %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check: nil, want an error saying %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check: %v, want an error saying %q", err, w)
				}
			}
			for _, key := range []string{"hunter2", "sk-very secret"} {
				if strings.Contains(err.Error(), key) {
					t.Errorf("Check: the error shows a secret: %v", err)
				}
			}
		})
	}
}
