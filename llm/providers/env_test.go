package providers

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestProviderFromEnvGemini(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		env    map[string]string
		want   []Config
		errHas string
	}{
		{
			name: "GEMINI_API_KEY",
			env:  map[string]string{"GEMINI_API_KEY": "AIza-env"},
			want: []Config{{Name: "gemini", Type: TypeGemini, APIKeyEnv: "GEMINI_API_KEY", APIKey: "AIza-env"}},
		},
		{
			name: "GEMINI_API_KEY and GEMINI_BASE_URL",
			env:  map[string]string{"GEMINI_API_KEY": "AIza-env", "GEMINI_BASE_URL": "http://127.0.0.1:8080"},
			want: []Config{{Name: "gemini", Type: TypeGemini, BaseURL: "http://127.0.0.1:8080", APIKeyEnv: "GEMINI_API_KEY", APIKey: "AIza-env"}},
		},
		{
			name: "all three keys: openai, anthropic, then gemini",
			env:  map[string]string{"GEMINI_API_KEY": "AIza-env", "ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-env"},
			want: []Config{
				{Name: "openai", Type: TypeOpenAI, APIKeyEnv: "OPENAI_API_KEY", APIKey: "sk-env"},
				{Name: "anthropic", Type: TypeAnthropic, APIKeyEnv: "ANTHROPIC_API_KEY", APIKey: "sk-ant"},
				{Name: "gemini", Type: TypeGemini, APIKeyEnv: "GEMINI_API_KEY", APIKey: "AIza-env"},
			},
		},
		{
			name:   "GEMINI_BASE_URL alone: Gemini needs a key",
			env:    map[string]string{"GEMINI_BASE_URL": "http://127.0.0.1:8080"},
			errHas: "GEMINI_API_KEY, GEMINI_BASE_URL: provider gemini: gemini: api_key is required",
		},
		{
			name:   "a key with a newline",
			env:    map[string]string{"GEMINI_API_KEY": "AIza-env\n"},
			errHas: "$GEMINI_API_KEY holds white space",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := FromEnv(envOf(tt.env))
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("FromEnv: %v, want an error saying %q", err, tt.errHas)
				}
				if strings.Contains(err.Error(), "AIza-env") {
					t.Errorf("the error shows the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("providers (-want +got):\n%s", diff)
			}
		})
	}
}
