package node

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/vogon"
	"github.com/engine-brain/brain/inbox"
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

// A vogon phase with approval: operator holds its passed result until an
// operator decides, on a real node: the process waits BLOCKED for approval
// of the phase_done call (a user may not decide it); a rejection is the
// call's error result, with the reason, and the phase goes on in the turn
// it wakes; the reworked result waits again, and once approved the next
// phase runs and answers.
func TestVogonPhaseWaitsForApproval(t *testing.T) {
	t.Parallel()
	model := nodetest.Script(t, `
turns:
  - rounds:
      - calls: [{name: phase_done, args: {result: "Brain is a server."}}]
      - calls: [{name: phase_done, args: {result: "Brain is a server that runs LLM agents."}}]
      - calls: [{name: phase_done, args: {result: "Brain runs LLM agents as durable processes."}}]
`)
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.Add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "vogon-gated", Input: "A note on brain.", Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	waitPhase := func(what, result string) conversation.PendingCall {
		t.Helper()
		r := c.Wait(t, what, func(r store.Record) bool {
			return r.ID == rec.ID && r.Waiting == inbox.WaitingApproval && len(r.Approvals) == 1 && strings.Contains(string(r.Approvals[0].Arguments), result)
		})
		p := r.Approvals[0]
		if r.Status.State != lifecycle.Blocked || p.Name != "phase_done" || p.By != conversation.ApproverOperator {
			t.Fatalf("record %s waiting for %+v; want BLOCKED, phase_done waiting for an operator", r.Status, p)
		}
		return p
	}
	first := waitPhase("the draft to wait for approval", "Brain is a server.")
	if _, err := n.Decide(ctx, rec.ID, "user:ada", conversation.ApprovalDecision{CallID: first.CallID, Decision: conversation.Approve}, ""); !errors.Is(err, inbox.ErrOperatorOnly) {
		t.Fatalf("the user's decision = %v, want ErrOperatorOnly", err)
	}
	if _, err := n.Decide(ctx, rec.ID, "operator:bo", conversation.ApprovalDecision{CallID: first.CallID, Decision: conversation.Reject, Reason: "Say what it runs."}, ""); err != nil {
		t.Fatal(err)
	}
	second := waitPhase("the reworked draft to wait for approval", "runs LLM agents.")
	if _, err := n.Decide(ctx, rec.ID, "operator:bo", conversation.ApprovalDecision{CallID: second.CallID, Decision: conversation.Approve}, ""); err != nil {
		t.Fatal(err)
	}
	done := c.Wait(t, "the final phase's answer", func(r store.Record) bool {
		return r.ID == rec.ID && r.Status.State == lifecycle.Blocked && r.Waiting == inbox.WaitingUser
	})
	if len(done.Approvals) != 0 {
		t.Errorf("approvals after the answer: %+v, want none", done.Approvals)
	}
	if n := len(model.Requests()); n != 3 {
		t.Errorf("model calls = %d, want 3: the draft, the reworked draft, the final", n)
	}
	var changes, results []string
	answer := ""
	for _, e := range mustLog(t, n, rec.ID) {
		switch {
		case e.PhaseChange != nil:
			changes = append(changes, e.PhaseChange.From+">"+e.PhaseChange.To+":"+e.PhaseChange.Reason)
		case e.ToolCallResponse != nil && e.ToolCallResponse.Name == "phase_done":
			results = append(results, conversation.TextOf(e.ToolCallResponse.Content))
		case e.ChatResponse != nil && e.ChatResponse.AddressedTo(conversation.RoleUser):
			answer = e.ChatResponse.Text
		}
	}
	if got, want := strings.Join(changes, " "), ">draft:start draft>final:done final>:done"; got != want {
		t.Errorf("phase changes %q, want %q", got, want)
	}
	if len(results) != 3 || !strings.HasPrefix(results[0], vogon.Rejected+"operator:bo rejected the result (reason: Say what it runs.)") ||
		results[1] != vogon.Ack || results[2] != vogon.Ack {
		t.Errorf("phase_done results %q; want the rejection with its reason, then two acks", results)
	}
	if answer != "Brain runs LLM agents as durable processes." {
		t.Errorf("answer %q, want the final phase's result", answer)
	}
}

// A chat process spawns a worker-like vogon (turn_end: finish_task) with
// spawn_worker; the worker runs its phases, and its last phase's result
// reaches the parent's inbox as a process_event, parsed as data, and wakes
// it.
func TestSpawnVogonWorker(t *testing.T) {
	t.Parallel()
	model := nodetest.Script(t, `
turns:
  - match: '"data":{"count":3}'
    rounds:
      - calls: [{name: respond, args: {message: "Three tickets."}}]
  - match: "TASK:"
    rounds:
      - calls: [{name: phase_done, args: {result: ["#1", "#2", "#3"]}}]
      - calls: [{name: phase_done, args: {result: {count: 3}}}]
  - rounds:
      - calls: [{name: spawn_worker, args: {recipe: vogon-worker, task: "TASK: count the open tickets"}}]
      - calls: [{name: respond, args: {message: "A worker is on it.", awaiting_user_input: false}}]
`)
	c := nodetest.NewCommits()
	lib := nodetest.Recipes(t, "testdata/recipes")
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Recipes: lib, OnCommit: c.Add})
	ctx := context.Background()
	parent, err := n.Create(ctx, NewProcess{Recipe: "arthur", Input: "How many tickets are open?", Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	child := c.Wait(t, "the vogon worker to finish", func(r store.Record) bool { return r.Parent == parent.ID && r.Status.State == lifecycle.Done })
	c.Wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })
	if child.Recipe != "vogon-worker" || child.Engine != "vogon" {
		t.Errorf("worker %s on engine %s, want vogon-worker on vogon", child.Recipe, child.Engine)
	}
	var got *conversation.ProcessEvent
	for _, e := range mustLog(t, n, parent.ID) {
		if m := e.InboxMessage; m != nil {
			if pe, ok := m.ProcessEvent(); ok {
				got = &pe
			}
		}
	}
	want := conversation.ProcessEvent{Child: child.ID, Recipe: "vogon-worker", Status: "done", Result: "{\n  \"count\": 3\n}", Data: json.RawMessage(`{"count":3}`)}
	if got == nil || !cmp.Equal(*got, want) {
		t.Fatalf("parent's process_event = %+v, want %+v", got, want)
	}
}
