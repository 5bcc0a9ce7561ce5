package providers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/anthropic"
	"github.com/engine-brain/brain/llm/gemini"
	"github.com/engine-brain/brain/llm/openai/openaitest"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// ask makes one model call through m and returns the respond message of
// the answer.
func ask(t *testing.T, m llm.Model, model string) string {
	t.Helper()
	resp, err := llm.Collect(m.Generate(context.Background(), &llm.Request{
		System:   "Be brief.",
		Messages: []conversation.Message{{Role: conversation.MessageUser, Content: []conversation.Block{conversation.TextBlock("hi")}}},
		Params:   llm.Params{Model: model},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != tools.Respond {
		t.Fatalf("answer %+v, want one respond call", resp)
	}
	var args struct{ Message string }
	if err := json.Unmarshal(resp.ToolCalls[0].Arguments, &args); err != nil {
		t.Fatal(err)
	}
	return args.Message
}

func TestProviderSetResolve(t *testing.T) {
	t.Parallel()
	first, second, other := openaitest.New(t, "first"), openaitest.New(t, "second"), openaitest.New(t, "other")
	set, err := New([]Config{
		{Name: "ollama", Type: TypeOpenAI, BaseURL: first.URL + "/v1", Model: "llama3.2"},
		{Name: "vllm", Type: TypeOpenAI, BaseURL: second.URL + "/v1", APIKeyEnv: "VLLM_KEY", APIKey: "sk-vllm", MaxAttempts: 1},
	}, Options{Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	// sent is what the cases check of the request the fake received.
	type sent struct{ Path, Auth, Model string }
	tests := []struct {
		name   string
		model  recipes.Model
		answer string // which fake answered
		want   sent
	}{
		{
			name:   "default is the first provider, with its default model",
			model:  recipes.Model{Provider: "default"},
			answer: "first",
			want:   sent{Path: "/v1/chat/completions", Model: "llama3.2"},
		},
		{
			name:   "no provider is the default",
			model:  recipes.Model{Name: "qwen3"},
			answer: "first",
			want:   sent{Path: "/v1/chat/completions", Model: "qwen3"},
		},
		{
			name:   "a named provider, with its key",
			model:  recipes.Model{Provider: "vllm", Name: "mistral"},
			answer: "second",
			want:   sent{Path: "/v1/chat/completions", Auth: "Bearer sk-vllm", Model: "mistral"},
		},
		{
			name:   "a recipe's base_url: the provider's settings, its key included, at that URL",
			model:  recipes.Model{Provider: "vllm", Name: "mistral", BaseURL: other.URL + "/alt/v1"},
			answer: "other",
			want:   sent{Path: "/alt/v1/chat/completions", Auth: "Bearer sk-vllm", Model: "mistral"},
		},
		{
			name:   "openai with a base_url and no such provider: no key",
			model:  recipes.Model{Provider: "openai", Name: "gpt-oss", BaseURL: other.URL + "/v1"},
			answer: "other",
			want:   sent{Path: "/v1/chat/completions", Model: "gpt-oss"},
		},
	}
	for _, tt := range tests {
		// Sequential: the cases share the fakes and read their last request.
		t.Run(tt.name, func(t *testing.T) {
			m, err := set.Resolve(tt.model)
			if err != nil {
				t.Fatal(err)
			}
			if got := ask(t, m, tt.model.Name); got != tt.answer {
				t.Fatalf("answered by %q, want %q", got, tt.answer)
			}
			fake := map[string]*openaitest.Server{"first": first, "second": second, "other": other}[tt.answer]
			reqs := fake.Received()
			got := reqs[len(reqs)-1]
			if diff := cmp.Diff(tt.want, sent{Path: got.Path, Auth: got.Auth, Model: got.Model}); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProviderSetCachesClients(t *testing.T) {
	t.Parallel()
	set, err := New([]Config{
		{Name: "ollama", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1"},
		{Name: "vllm", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:8000/v1"},
	}, Options{Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(m recipes.Model) llm.Model {
		t.Helper()
		got, err := set.Resolve(m)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	ollama := resolve(recipes.Model{Provider: "ollama"})
	if resolve(recipes.Model{Provider: "default", Name: "other"}) != ollama {
		t.Error("default and the first provider's name resolve to different clients")
	}
	if resolve(recipes.Model{Provider: "ollama", BaseURL: "http://127.0.0.1:11434/v1"}) != ollama {
		t.Error("a base_url equal to the provider's built a second client")
	}
	if resolve(recipes.Model{Provider: "vllm"}) == ollama {
		t.Error("two providers share a client")
	}

	// Many turns resolving at once get one client per provider and URL.
	const url = "http://127.0.0.1:9999/v1"
	var wg sync.WaitGroup
	got := make([]llm.Model, 16)
	for i := range got {
		wg.Go(func() {
			m, err := set.Resolve(recipes.Model{Provider: "vllm", BaseURL: url})
			if err != nil {
				t.Error(err)
			}
			got[i] = m
		})
	}
	wg.Wait()
	for _, m := range got {
		if m != got[0] {
			t.Fatal("a base_url resolved to more than one client")
		}
	}
	if got[0] == resolve(recipes.Model{Provider: "vllm"}) || got[0] == resolve(recipes.Model{Provider: "ollama", BaseURL: url}) {
		t.Error("a base_url shares the client of another URL or provider")
	}
}

// A provider's max_context_tokens is its models' window (llm.Windowed), a
// recipe's base_url on it included; a provider without one declares none.
func TestProviderContextWindow(t *testing.T) {
	t.Parallel()
	set, err := New([]Config{
		{Name: "ollama", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1", MaxContextTokens: 6000},
		{Name: "vllm", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:8000/v1"},
	}, Options{Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		m    recipes.Model
		want int // 0: not Windowed
	}{
		{recipes.Model{Provider: "default"}, 6000},
		{recipes.Model{Provider: "ollama", BaseURL: "http://127.0.0.1:11435/v1"}, 6000},
		{recipes.Model{Provider: "vllm"}, 0},
	} {
		m, err := set.Resolve(tt.m)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := m.(llm.Windowed)
		switch {
		case tt.want == 0 && ok:
			t.Errorf("%+v: a window of %d, want none", tt.m, w.ContextTokens())
		case tt.want > 0 && (!ok || w.ContextTokens() != tt.want):
			t.Errorf("%+v: Windowed %v, want a window of %d", tt.m, ok, tt.want)
		}
	}
}

func TestProviderSetErrors(t *testing.T) {
	t.Parallel()
	set, err := New([]Config{
		{Name: "ollama", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1"},
		{Name: "vllm", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:8000/v1", APIKey: "sk-never-shown"},
	}, Options{Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		model recipes.Model
		want  string
	}{
		{recipes.Model{Provider: "anthropic"}, `no model provider named "anthropic"; this server has ollama, vllm`},
		{recipes.Model{Provider: "openai"}, `no model provider named "openai"`},
		{recipes.Model{Provider: "vllm", BaseURL: "ftp://127.0.0.1/v1"}, "provider vllm: openai: base_url"},
	} {
		_, err := set.Resolve(tt.model)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Resolve(%+v) = %v, want an error saying %q", tt.model, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "sk-never-shown") {
			t.Errorf("Resolve(%+v): the error shows the key: %v", tt.model, err)
		}
	}
}

// stubModel stands for a model that is no provider's.
type stubModel struct{ llm.Model }

// TestProviderSetFallback: with no provider configured, every recipe gets
// Options.Fallback (brain serve's demo model), but openai at a base_url.
func TestProviderSetFallback(t *testing.T) {
	t.Parallel()
	fallback := &stubModel{}
	set, err := New(nil, Options{Fallback: fallback, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []recipes.Model{{Provider: "default"}, {}, {Provider: "anthropic"}, {Provider: "openai"}} {
		got, err := set.Resolve(m)
		if err != nil || got != llm.Model(fallback) {
			t.Errorf("Resolve(%+v) = %v, %v; want the fallback model", m, got, err)
		}
	}
	// openai at a base URL is a real server, fallback or not.
	fake := openaitest.New(t, "real")
	m, err := set.Resolve(recipes.Model{Provider: "openai", BaseURL: fake.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ask(t, m, "any"); got != "real" {
		t.Errorf("answered %q, want the fake's answer", got)
	}

	// With a provider configured, the fallback stands for none.
	withProvider, err := New([]Config{{Name: "ollama", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1"}}, Options{Fallback: fallback, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := withProvider.Resolve(recipes.Model{Provider: "anthropic"}); err == nil {
		t.Errorf("Resolve(anthropic) with a provider configured = %v; want an error", got)
	}
}

func TestProviderSetCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRecipe := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeRecipe("good.yaml", "name: good\nextends: default\nmodel: {provider: ollama, base_url: http://127.0.0.1:1/v1}\n")
	writeRecipe("lost.yaml", "name: lost\nextends: default\nmodel: {provider: gemini}\n")
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := New([]Config{{Name: "ollama", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1"}}, Options{Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	err = set.Check(lib)
	if want := `recipe lost: model: no model provider named "gemini"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("check: %v, want an error saying %q", err, want)
	}
	if strings.Contains(err.Error(), "recipe good") || strings.Contains(err.Error(), "recipe default") {
		t.Errorf("check refused a recipe it can run: %v", err)
	}
}

func TestAnthropicProvider(t *testing.T) {
	t.Parallel()
	p := Config{Name: "claude", Type: TypeAnthropic, APIKey: "sk-ant", Model: "claude-sonnet-4-5"}
	m, err := p.newModel("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := clientOf(t, m).(*anthropic.Client); !ok {
		t.Fatalf("newModel gave %T, want *anthropic.Client", clientOf(t, m))
	}
	if err := (Config{Name: "claude", Type: TypeAnthropic}).Check(); err == nil || !strings.Contains(err.Error(), "api_key is required") {
		t.Fatalf("an anthropic provider without a key: %v, want a clear error", err)
	}
	if err := (Config{Name: "claude", Type: TypeAnthropic, APIKey: "k", BaseURL: "https://api.anthropic.com/v1"}).Check(); err == nil || !strings.Contains(err.Error(), "leave out the /v1") {
		t.Fatalf("an anthropic base_url with /v1: %v, want a clear error", err)
	}
}

func TestGeminiProvider(t *testing.T) {
	t.Parallel()
	fake, other := newFakeGemini(t, "from gemini"), newFakeGemini(t, "from a proxy")
	set, err := New([]Config{
		{Name: "google", Type: TypeGemini, BaseURL: fake.URL, APIKeyEnv: "GEMINI_API_KEY", APIKey: "AIza-test", Model: "gemini-2.5-flash"},
	}, Options{Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := set.Resolve(recipes.Model{Provider: "google"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := clientOf(t, m).(*gemini.Client); !ok {
		t.Fatalf("Resolve gave %T, want *gemini.Client", clientOf(t, m))
	}
	if got := ask(t, m, ""); got != "from gemini" {
		t.Errorf("answered %q, want the fake's answer", got)
	}
	if key, path := fake.last(); key != "AIza-test" || path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" {
		t.Errorf("request with key %q to %s; want the provider's key and default model", key, path)
	}

	// A recipe's base_url and model: the provider's key, at that URL.
	m, err = set.Resolve(recipes.Model{Provider: "default", Name: "gemini-2.5-pro", BaseURL: other.URL + "/proxy"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ask(t, m, "gemini-2.5-pro"); got != "from a proxy" {
		t.Errorf("answered %q, want the proxy's answer", got)
	}
	if key, path := other.last(); key != "AIza-test" || path != "/proxy/v1beta/models/gemini-2.5-pro:streamGenerateContent" {
		t.Errorf("request with key %q to %s; want the provider's key at the recipe's base_url", key, path)
	}

	if got := (Config{Type: TypeGemini}).endpoint(); got != gemini.DefaultBaseURL {
		t.Errorf("endpoint %q, want %q", got, gemini.DefaultBaseURL)
	}
	for _, tt := range []struct {
		p    Config
		want string
	}{
		{Config{Name: "google", Type: TypeGemini}, "provider google: gemini: api_key is required"},
		{Config{Name: "google", Type: TypeGemini, APIKey: "k", BaseURL: "https://generativelanguage.googleapis.com/v1beta"}, "leave out the version path"},
	} {
		if err := tt.p.Check(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("check(%+v) = %v, want an error saying %q", tt.p, err, tt.want)
		}
	}
}

// clientOf returns the client a provider's model wraps (llm.Answering).
func clientOf(t *testing.T, m llm.Model) llm.Model {
	t.Helper()
	a, ok := m.(*llm.Answered)
	if !ok {
		t.Fatalf("the model is a %T, want an *llm.Answered", m)
	}
	return a.Unwrap()
}

// TestNewRefuses: New takes no provider Check refuses, nor two of one name.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		providers []Config
		want      string
	}{
		{
			[]Config{{Name: "default", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:1/v1"}},
			`providers[0]: name: "default" is reserved`,
		},
		{
			[]Config{{Name: "local", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:1/v1"}, {Name: "local", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:2/v1"}},
			`providers[1].name: "local" is already the name of providers[0]; names must be unique`,
		},
		{
			[]Config{{Name: "local", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:1/v1"}, {Name: "claude", Type: TypeAnthropic}},
			"providers[1]: provider claude: anthropic: api_key is required",
		},
	} {
		set, err := New(tt.providers, Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, %v; want an error saying %q", tt.providers, set, err, tt.want)
		}
	}
}

// TestSetWithoutFallback: without a provider nor a fallback, only openai
// at a base_url resolves; a Set logs nothing without a logger.
func TestSetWithoutFallback(t *testing.T) {
	t.Parallel()
	set, err := New(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `no model provider named "default"; this server has none`
	if _, err := set.Resolve(recipes.Model{Provider: "default"}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Resolve: %v, want an error saying %q", err, want)
	}
	fake := openaitest.New(t, "real")
	m, err := set.Resolve(recipes.Model{Provider: "openai", BaseURL: fake.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ask(t, m, "any"); got != "real" {
		t.Errorf("answered %q, want the fake's answer", got)
	}
}
