package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/providers"
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
	for _, tt := range []struct {
		offered []string
		want    string // the call, or "" for text
	}{
		{[]string{tools.TellUser, tools.Respond}, tools.Respond},
		{[]string{"http_fetch", tools.FinishTask}, tools.FinishTask},
		{nil, ""},
	} {
		req := &llm.Request{Messages: []conversation.Message{{Role: conversation.MessageUser,
			Content: []conversation.Block{conversation.TextBlock("hi")}}}}
		for _, name := range tt.offered {
			req.Tools = append(req.Tools, llm.ToolDef{Name: name})
		}
		resp, err := llm.Collect(m.Generate(context.Background(), req))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tt.want == "" && (len(resp.ToolCalls) != 0 || !strings.Contains(resp.Text, "demo model")):
			t.Errorf("offered %v: the demo model answered %+v, want a text", tt.offered, resp)
		case tt.want != "" && (len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != tt.want):
			t.Errorf("offered %v: the demo model answered %+v, want one %s call", tt.offered, resp, tt.want)
		}
	}
}

// Every built-in recipe plays the demo model to the end of a turn with no
// unknown tool and no model error: marvin-worker finishes its task (failed,
// saying why), the chat recipes wait for the user.
func TestDemoModelFitsEveryEngine(t *testing.T) {
	t.Parallel()
	m, err := demoModel()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"default", "ford", "marvin-worker", "web-research"} {
		r, err := recipes.Builtin().Get(name)
		if err != nil {
			t.Fatal(err)
		}
		reg, err := toolset.Build(toolset.Builtins(), r)
		if err != nil {
			t.Fatal(err)
		}
		kind, err := brain.DefaultEngines(nil).Of(r)
		if err != nil {
			t.Fatal(err)
		}
		sess := engines.NewSession(kind.Engine, engines.Turn{Recipe: r, Model: m, Tools: reg}, nil)
		if _, err := sess.Say(context.Background(), "user", "hello"); err != nil {
			t.Fatal(err)
		}
		if problems := playProblems(sess.Log, reg, "", nil); len(problems) > 0 {
			t.Errorf("%s: %+v", name, problems)
		}
		want := lifecycle.Blocked
		if name == "marvin-worker" {
			want = lifecycle.Done
		}
		if sess.Status.State != want {
			var out strings.Builder
			writeAuthorTranscript(&out, sess.Log)
			t.Errorf("%s: state %s, want %s:\n%s", name, sess.Status, want, out.String())
		}
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
		if _, ok := got.(*engineDemoModel); !ok {
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
