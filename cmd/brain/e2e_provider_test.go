package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm/openai/openaitest"
	"github.com/engine-brain/brain/tools"
)

// TestEndToEndProvider runs `brain serve` (embedded Redis) against a fake
// OpenAI-compatible server: a provider of brain.yaml, then a recipe's own
// base_url, each through a whole turn that ends BLOCKED with the fake's
// answer in the user view.
func TestEndToEndProvider(t *testing.T) {
	t.Parallel()
	bin := brainBinary(t)
	const answer = "Six times seven is 42 (from the fake model)."
	fake := openaitest.New(t, answer)

	dir := t.TempDir()
	recipeDir := filepath.Join(dir, "recipes")
	if err := os.Mkdir(recipeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeRecipe(t, recipeDir, "localchat.yaml", "name: localchat\nextends: default\nmodel: {provider: local, name: fake-model}\n")
	writeRecipe(t, recipeDir, "direct.yaml", "name: direct\nextends: default\nmodel: {provider: openai, name: other-model, base_url: "+fake.URL+"/direct/v1}\n")
	config := filepath.Join(dir, "brain.yaml")
	configText := "recipes: recipes\nproviders:\n  - {name: local, type: openai, base_url: " + fake.URL + "/v1, api_key_env: E2E_FAKE_KEY}\n"
	if err := os.WriteFile(config, []byte(configText), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "sk-e2e-never-logged"
	srv := startServeEnv(t, bin, dir, []string{"E2E_FAKE_KEY=" + key}, "--config", config, "--listen", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	c := api.NewClient(srv.url, "")

	// run creates a process of recipe with input, follows it until BLOCKED
	// and checks that the user view ends with the fake's answer.
	run := func(recipe, input string) {
		t.Helper()
		p, err := c.CreateProcess(ctx, api.CreateRequest{Recipe: recipe, Input: input})
		if err != nil {
			t.Fatal(err)
		}
		states, _ := followUntilBlocked(ctx, t, c, p.ID, "")
		if want := []string{"RUNNING", "BLOCKED"}; !slices.Equal(states, want) {
			t.Errorf("%s: states %v, want %v", recipe, states, want)
		}
		page, err := c.Events(ctx, p.ID, "user", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var replies []string
		for _, e := range page.Events {
			if r := e.ToolCallResponse; r != nil && r.Name == tools.Respond {
				replies = append(replies, conversation.TextOf(r.Content))
			}
		}
		if want := []string{answer}; !slices.Equal(replies, want) {
			t.Errorf("%s: replies in the user view %q, want %q", recipe, replies, want)
		}
	}

	// A provider of brain.yaml.
	run("localchat", "What is six times seven?")
	reqs := fake.Received()
	if len(reqs) != 1 {
		t.Fatalf("the fake got %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Path != "/v1/chat/completions" || got.Auth != "Bearer "+key || got.Model != "fake-model" || !got.Stream {
		t.Errorf("request: path %s, authorized %t, model %q, stream %t; want /v1/chat/completions, the key, fake-model, a stream",
			got.Path, got.Auth == "Bearer "+key, got.Model, got.Stream)
	}
	if sys := got.Text("system"); !strings.Contains(sys, "You always end your turn with exactly one call to the `respond` tool.") {
		t.Errorf("the system prompt is not the default recipe's:\n%s", sys)
	}
	if user := got.Text("user"); !strings.Contains(user, "What is six times seven?") {
		t.Errorf("the user message is missing: %q", user)
	}
	if names := got.ToolNames(); !slices.Contains(names, tools.Respond) {
		t.Errorf("tools %v lack respond", names)
	}

	// A recipe's own base_url: provider openai, not configured, so no key.
	run("direct", "hello")
	reqs = fake.Received()
	if len(reqs) != 2 {
		t.Fatalf("the fake got %d requests, want 2", len(reqs))
	}
	if got := reqs[1]; got.Path != "/direct/v1/chat/completions" || got.Auth != "" || got.Model != "other-model" {
		t.Errorf("request: path %s, authorized %t, model %q; want /direct/v1/chat/completions, no key, other-model",
			got.Path, got.Auth != "", got.Model)
	}

	srv.stop(t)
	log := srv.log.String()
	for _, want := range []string{`"provider":"local"`, `"base_url":"` + fake.URL + `/v1"`, `"base_url":"` + fake.URL + `/direct/v1"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the server's log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, demoModelWarning) {
		t.Errorf("the server warns about the demo model with a provider configured:\n%s", log)
	}
	if strings.Contains(log, key) {
		t.Errorf("the server's log shows the API key:\n%s", log)
	}
}

// TestEndToEndHostedSearch runs the built-in web-research recipe through
// `brain serve` against the fake, whose Responses API searches the web
// itself: the search is hosted activity in the log, the source the text
// cites reaches the user with the answer, and the tokens are logged.
func TestEndToEndHostedSearch(t *testing.T) {
	t.Parallel()
	bin := brainBinary(t)
	const answer = "It is 42, says example.org."
	fake := openaitest.New(t, answer)
	dir := t.TempDir()
	config := filepath.Join(dir, "brain.yaml")
	configText := "providers:\n  - {name: local, type: openai, base_url: " + fake.URL + "/v1, model: fake-search-model}\n"
	if err := os.WriteFile(config, []byte(configText), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServeEnv(t, bin, dir, nil, "--config", config, "--listen", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	c := api.NewClient(srv.url, "")

	p, err := c.CreateProcess(ctx, api.CreateRequest{Recipe: "web-research", Input: "What is the answer to everything?"})
	if err != nil {
		t.Fatal(err)
	}
	followUntilBlocked(ctx, t, c, p.ID, "")
	if reqs := fake.Received(); len(reqs) != 1 || reqs[0].Path != "/v1/responses" {
		t.Fatalf("the fake got %+v; want one request to /v1/responses", reqs)
	}

	user, err := c.Events(ctx, p.ID, "user", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var reply *conversation.ToolCallResponse
	for _, e := range user.Events {
		if r := e.ToolCallResponse; r != nil && r.Name == tools.Respond {
			reply = r
		}
	}
	want := []conversation.Citation{{Source: conversation.Source{URL: openaitest.SourceURL, Title: openaitest.SourceTitle}}}
	if reply == nil || conversation.TextOf(reply.Content) != answer || !slices.EqualFunc(reply.Citations, want, func(a, b conversation.Citation) bool {
		return a.Source == b.Source && !a.Incomplete
	}) {
		t.Fatalf("the user's answer is %+v; want %q citing %s", reply, answer, openaitest.SourceURL)
	}

	raw, err := c.Events(ctx, p.ID, "raw", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var states []conversation.ActivityState
	var usage *conversation.ModelUsage
	for _, e := range raw.Events {
		if h := e.HostedActivity; h != nil && h.Name == "web_search" {
			states = append(states, h.State)
		}
		if e.ModelUsage != nil {
			usage = e.ModelUsage
		}
		if e.ToolCallRequest != nil && e.ToolCallRequest.Name == "web_search" {
			t.Errorf("the hosted search was logged as a tool call: %+v", e)
		}
	}
	if !slices.Equal(states, []conversation.ActivityState{conversation.ActivityStarted, conversation.ActivityCompleted}) {
		t.Errorf("hosted web_search states %v, want started, completed", states)
	}
	if usage == nil || usage.InputTokens != 300 || usage.OutputTokens != 40 {
		t.Errorf("model usage %+v, want 300 in, 40 out", usage)
	}
	var out, errOut bytes.Buffer
	env := func(k string) string {
		if k == "BRAIN_URL" {
			return srv.url
		}
		return ""
	}
	if code := runClient(ctx, "logs", []string{"--view", "raw", p.ID}, env, &out, &errOut); code != 0 {
		t.Fatalf("brain logs --view raw: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "model_usage model: local/fake-search-model: 300 tokens in, 40 out") ||
		!strings.Contains(out.String(), `hosted_activity model: web_search started {"query":"`+openaitest.SearchQuery+`"}`) {
		t.Errorf("brain logs --view raw does not show the usage and the search:\n%s", out.String())
	}
}
