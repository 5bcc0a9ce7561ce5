package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

// A vogon process whose node stops in its second phase is recovered by
// another node in that phase: its model call is shown the critique's
// prompt with the draft's result, the draft is not asked again, and the
// log holds every phase change once.
func TestVogonResumesInItsPhase(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	model := newTurnModel(
		modelAnswer{Calls: []conversation.ToolCall{call("c1", "phase_done", `{"result":{"title":"Brain","body":"Brain runs LLM agents as processes."}}`)}},
		modelAnswer{Hang: true}, // the first node stops during the critique's call
		modelAnswer{Calls: []conversation.ToolCall{call("c2", "phase_done", `{"result":{"issues":["Say that they are durable."]}}`)}},
		modelAnswer{Calls: []conversation.ToolCall{call("c3", "phase_done", `{"result":"Brain runs LLM agents as durable processes."}`)}},
	)
	commits := nodetest.NewCommits()
	cfg := Config{Redis: srv.Client(t), NodeID: "a", Models: map[string]llm.Model{"default": model},
		OnCommit: commits.Add, LeaseTTL: time.Second, Grace: time.Millisecond}
	a := startNode(t, cfg)
	ctx := context.Background()
	rec, err := a.Create(ctx, NewProcess{Recipe: "vogon-review", Input: "A note on brain."})
	if err != nil {
		t.Fatal(err)
	}
	model.entered(t, 1) // the draft passed its gate: the critique's call runs
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	cfg.NodeID = "b"
	startNode(t, cfg)
	commits.Wait(t, "the recovered turn's commit", func(r store.Record) bool { return r.ID == rec.ID && r.Status.State == lifecycle.Blocked })

	reqs := model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model calls = %d, want 4: node a's draft and critique, then node b's critique and final", len(reqs))
	}
	for _, want := range []string{"# Phase 2 of 3: critique", "## draft", `"body":"Brain runs LLM agents as processes."`} {
		if !strings.Contains(reqs[2].System, want) {
			t.Errorf("the recovered call's system prompt lacks %q:\n%s", want, reqs[2].System)
		}
	}
	log, err := a.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	answer := ""
	for _, e := range log {
		if pc := e.PhaseChange; pc != nil {
			changes = append(changes, pc.From+">"+pc.To+":"+pc.Reason)
		}
		if c := e.ChatResponse; c != nil && c.AddressedTo(conversation.RoleUser) {
			answer = c.Text
		}
	}
	if got, want := strings.Join(changes, " "), ">draft:start draft>critique:done critique>final:done final>:done"; got != want {
		t.Errorf("phase changes %q, want %q", got, want)
	}
	if answer != "Brain runs LLM agents as durable processes." {
		t.Errorf("answer %q, want the final phase's result", answer)
	}
}
