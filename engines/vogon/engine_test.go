package vogon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/llm/scripted"
)

// TestPhasePrompts: each phase's model calls are shown its own prompt and
// tools, and the results of the phases before it; the tools of other
// phases are not offered.
func TestPhasePrompts(t *testing.T) {
	t.Parallel()
	s := enginetest.Load(t, "testdata/draft_critique_final.yaml")
	s.Recipe.SystemPrompt = "You write notes."
	model := scripted.New(&s.Script)
	clock := engines.StepClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	sess := engines.NewSession(Kind(clock).Engine, engines.Turn{Recipe: &s.Recipe, Model: model, Tools: testRegistry(t, &s.Recipe)}, clock)
	if _, err := sess.Say(context.Background(), "user:ada", s.Messages[0]); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if len(reqs) != 8 {
		t.Fatalf("got %d model calls, want 8", len(reqs))
	}
	type want struct {
		phase string
		has   []string
		not   []string
		tools string
	}
	for i, w := range []want{
		0: {phase: "Phase 1 of 3: draft", has: []string{"You write notes.", "Write a draft.", `"required":["title","body"]`, "call `respond` alone"},
			not: []string{"Results of the earlier phases", "Sent back"}, tools: "respond,lookup,phase_done"},
		3: {phase: "Phase 2 of 3: critique", has: []string{"Criticise the draft.", "## draft", `"title":"Brain"`}, not: []string{"Sent back"}, tools: "respond,phase_done"},
		// back to the draft: its own earlier result, and why the critique's were refused
		5: {phase: "Phase 1 of 3: draft", has: []string{"# Sent back to this phase", "Phase critique could not pass its gate",
			"## Your earlier result of this phase", `{"body":"Brain runs agents.","title":"Brain"}`,
			"## Why critique's results were refused", "at '/issues': got string, want array", "at '/issues': got number, want array"},
			not: []string{"Results of the earlier phases"}, tools: "respond,lookup,phase_done"},
		7: {phase: "Phase 3 of 3: final", has: []string{"## draft", "## critique", `{"issues":["no example"]}`, "runs LLM agents as durable processes"},
			not: []string{"Sent back"}, tools: "respond,phase_done"},
	} {
		if w.phase == "" {
			continue
		}
		sys := reqs[i].System
		for _, h := range append(w.has, w.phase) {
			if !strings.Contains(sys, h) {
				t.Errorf("call %d: system prompt lacks %q:\n%s", i, h, sys)
			}
		}
		for _, n := range w.not {
			if strings.Contains(sys, n) {
				t.Errorf("call %d: system prompt has %q:\n%s", i, n, sys)
			}
		}
		var names []string
		for _, d := range reqs[i].Tools {
			names = append(names, d.Name)
		}
		if got := strings.Join(names, ","); got != w.tools {
			t.Errorf("call %d: tools %s, want %s", i, got, w.tools)
		}
	}
}
