package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/providers"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

// The demo model, played on the default recipe: any message gets the
// "no provider configured" answer; a message about data gets a server-built
// presentation (table with computed shares, pie chart) and a short reply.
func TestDemoModelOnTheDefaultRecipe(t *testing.T) {
	t.Parallel()
	m, err := demoModel()
	if err != nil {
		t.Fatal(err)
	}
	r, err := recipes.Builtin().Get("default")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := toolset.Build(toolset.Builtins(), r)
	if err != nil {
		t.Fatal(err)
	}
	sess := engines.NewSession(&chat.Engine{}, engines.Turn{Recipe: r, Model: m, Tools: reg}, nil)
	ctx := context.Background()
	for _, msg := range []string{"hello", "show me some data"} {
		if _, err := sess.Say(ctx, "user", msg); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	writeTranscript(&out, sess.Log)
	for _, want := range []string{
		"No model provider is configured",
		"  Type  Count  Share\n  ────  ─────  ─────\n  JPEG     81  80.2%\n  PNG      20  19.8%\n",
		"That table and chart were built by the server",
		"[state] RUNNING -> BLOCKED",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("transcript lacks %q:\n%s", want, out.String())
		}
	}
	var charts int
	for _, e := range sess.Log {
		if p := e.Presentation; p != nil && strings.Contains(string(p.Blocks), `"chart_type":"pie"`) {
			charts++
		}
	}
	if charts != 1 {
		t.Errorf("%d presentations with a pie chart, want 1", charts)
	}
	if sess.Status.State != lifecycle.Blocked {
		t.Errorf("state %s, want BLOCKED", sess.Status)
	}
}

func TestDemoModelAnswers(t *testing.T) {
	t.Parallel()
	m, err := demoModel()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := llm.Collect(m.Generate(context.Background(), &llm.Request{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != tools.Respond {
		t.Errorf("the demo model answered %+v, want one respond call", resp)
	}
}

// TestNewModelsDemo: with no provider configured, every recipe gets the
// demo model, whatever provider it names; with one, no recipe does.
func TestNewModelsDemo(t *testing.T) {
	t.Parallel()
	models, err := newModels(nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []recipes.Model{{Provider: "default"}, {}, {Provider: "anthropic"}, {Provider: "openai"}} {
		got, err := models.Resolve(m)
		if err != nil {
			t.Fatalf("Resolve(%+v): %v", m, err)
		}
		if _, ok := got.(*scripted.Model); !ok {
			t.Errorf("Resolve(%+v) = %T, want the demo model", m, got)
		}
	}

	models, err = newModels([]providers.Config{{Name: "local", Type: providers.TypeOpenAI, BaseURL: "http://127.0.0.1:1/v1"}}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := models.Resolve(recipes.Model{Provider: "anthropic"}); err == nil {
		t.Errorf("Resolve(anthropic) with a provider configured = %T, want an error", got)
	}
}
