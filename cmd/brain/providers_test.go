package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/anthropic"
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
	first, second, other := newFakeOpenAI(t, "first"), newFakeOpenAI(t, "second"), newFakeOpenAI(t, "other")
	set, err := newProviderSet([]providerConfig{
		{Name: "ollama", Type: providerOpenAI, BaseURL: first.URL + "/v1", Model: "llama3.2"},
		{Name: "vllm", Type: providerOpenAI, BaseURL: second.URL + "/v1", APIKeyEnv: "VLLM_KEY", APIKey: "sk-vllm", MaxAttempts: 1},
	}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		model  recipes.Model
		answer string // which fake answered
		want   fakeRequest
	}{
		{
			name:   "default is the first provider, with its default model",
			model:  recipes.Model{Provider: "default"},
			answer: "first",
			want:   fakeRequest{Path: "/v1/chat/completions", Body: chatRequest{Model: "llama3.2"}},
		},
		{
			name:   "no provider is the default",
			model:  recipes.Model{Name: "qwen3"},
			answer: "first",
			want:   fakeRequest{Path: "/v1/chat/completions", Body: chatRequest{Model: "qwen3"}},
		},
		{
			name:   "a named provider, with its key",
			model:  recipes.Model{Provider: "vllm", Name: "mistral"},
			answer: "second",
			want:   fakeRequest{Path: "/v1/chat/completions", Auth: "Bearer sk-vllm", Body: chatRequest{Model: "mistral"}},
		},
		{
			name:   "a recipe's base_url: the provider's settings, its key included, at that URL",
			model:  recipes.Model{Provider: "vllm", Name: "mistral", BaseURL: other.URL + "/alt/v1"},
			answer: "other",
			want:   fakeRequest{Path: "/alt/v1/chat/completions", Auth: "Bearer sk-vllm", Body: chatRequest{Model: "mistral"}},
		},
		{
			name:   "openai with a base_url and no such provider: no key",
			model:  recipes.Model{Provider: "openai", Name: "gpt-oss", BaseURL: other.URL + "/v1"},
			answer: "other",
			want:   fakeRequest{Path: "/v1/chat/completions", Body: chatRequest{Model: "gpt-oss"}},
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
			fake := map[string]*fakeOpenAI{"first": first, "second": second, "other": other}[tt.answer]
			reqs := fake.received()
			got := reqs[len(reqs)-1]
			got.Body = chatRequest{Model: got.Body.Model}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProviderSetCachesClients(t *testing.T) {
	t.Parallel()
	set, err := newProviderSet([]providerConfig{
		{Name: "ollama", Type: providerOpenAI, BaseURL: "http://127.0.0.1:11434/v1"},
		{Name: "vllm", Type: providerOpenAI, BaseURL: "http://127.0.0.1:8000/v1"},
	}, zap.NewNop())
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

func TestProviderSetErrors(t *testing.T) {
	t.Parallel()
	set, err := newProviderSet([]providerConfig{
		{Name: "ollama", Type: providerOpenAI, BaseURL: "http://127.0.0.1:11434/v1"},
		{Name: "vllm", Type: providerOpenAI, BaseURL: "http://127.0.0.1:8000/v1", APIKey: "sk-never-shown"},
	}, zap.NewNop())
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

func TestProviderSetDemo(t *testing.T) {
	t.Parallel()
	set, err := newProviderSet(nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []recipes.Model{{Provider: "default"}, {}, {Provider: "anthropic"}, {Provider: "openai"}} {
		got, err := set.Resolve(m)
		if err != nil || got != set.demo {
			t.Errorf("Resolve(%+v) = %v, %v; want the demo model", m, got, err)
		}
	}
	// openai at a base URL is a real server, demo or not.
	fake := newFakeOpenAI(t, "real")
	m, err := set.Resolve(recipes.Model{Provider: "openai", BaseURL: fake.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ask(t, m, "any"); got != "real" {
		t.Errorf("answered %q, want the fake's answer", got)
	}
}

func TestProviderSetCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRecipe(t, dir, "good.yaml", "name: good\nextends: default\nmodel: {provider: ollama, base_url: http://127.0.0.1:1/v1}\n")
	writeRecipe(t, dir, "lost.yaml", "name: lost\nextends: default\nmodel: {provider: gemini}\n")
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := newProviderSet([]providerConfig{{Name: "ollama", Type: providerOpenAI, BaseURL: "http://127.0.0.1:11434/v1"}}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	err = set.check(lib)
	if want := `recipe lost: model: no model provider named "gemini"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("check: %v, want an error saying %q", err, want)
	}
	if strings.Contains(err.Error(), "recipe good") || strings.Contains(err.Error(), "recipe default") {
		t.Errorf("check refused a recipe it can run: %v", err)
	}
}

func TestRecipeBaseURLSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRecipe(t, dir, "bad.yaml", "name: bad\nextends: default\nmodel:\n  provider: openai\n  base_url: \"http://me:pw@127.0.0.1/v1\"\n")
	_, err := recipes.LoadDir(dir)
	if want := "bad.yaml:5:13: model.base_url: must be an http or https URL"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("load: %v, want an error saying %q", err, want)
	}
}

func TestAnthropicProvider(t *testing.T) {
	t.Parallel()
	p := providerConfig{Name: "claude", Type: providerAnthropic, APIKey: "sk-ant", Model: "claude-sonnet-4-5"}
	m, err := p.newModel("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*anthropic.Client); !ok {
		t.Fatalf("newModel gave %T, want *anthropic.Client", m)
	}
	if err := (providerConfig{Name: "claude", Type: providerAnthropic}).check(); err == nil || !strings.Contains(err.Error(), "api_key is required") {
		t.Fatalf("an anthropic provider without a key: %v, want a clear error", err)
	}
	if err := (providerConfig{Name: "claude", Type: providerAnthropic, APIKey: "k", BaseURL: "https://api.anthropic.com/v1"}).check(); err == nil || !strings.Contains(err.Error(), "leave out the /v1") {
		t.Fatalf("an anthropic base_url with /v1: %v, want a clear error", err)
	}
}
