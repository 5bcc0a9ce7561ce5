package node

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// turnModel answers the n-th call it gets with answers[n] (the last one
// past the end), recording every request. An answer with Hang writes its
// text, then waits for its call to be cancelled; Entered receives the
// index of each call as it begins.
type turnModel struct {
	answers []modelAnswer
	Entered chan int

	mu   sync.Mutex
	reqs []llm.Request
}

type modelAnswer struct {
	Text  string
	Calls []conversation.ToolCall
	Hang  bool
}

func newTurnModel(answers ...modelAnswer) *turnModel {
	return &turnModel{answers: answers, Entered: make(chan int, 16)}
}

func (m *turnModel) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, llm.Request{System: req.System, Messages: slices.Clone(req.Messages)})
	a := m.answers[min(n, len(m.answers)-1)]
	m.mu.Unlock()
	return func(yield func(llm.Part, error) bool) {
		m.Entered <- n
		if a.Text != "" && !yield(llm.Part{Kind: llm.PartText, Text: a.Text}, nil) {
			return
		}
		if a.Hang {
			<-ctx.Done()
			yield(llm.Part{}, context.Cause(ctx))
			return
		}
		for _, c := range a.Calls {
			if !yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &c}, nil) {
				return
			}
		}
	}
}

// Requests returns the requests so far.
func (m *turnModel) Requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

// entered waits for the model's call n to begin.
func (m *turnModel) entered(t *testing.T, n int) {
	t.Helper()
	deadline := time.NewTimer(nodetest.WaitTimeout)
	defer deadline.Stop()
	for {
		select {
		case got := <-m.Entered:
			if got == n {
				return
			}
		case <-deadline.C:
			t.Fatalf("the model's call %d did not begin", n)
		}
	}
}

func call(id, name, args string) conversation.ToolCall {
	return conversation.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// waitTool stands in for http_fetch (recipe steered names it): each call
// signals on entered and returns once release is closed.
type waitTool struct {
	entered chan struct{}
	release chan struct{}
}

func newWaitTool() *waitTool {
	return &waitTool{entered: make(chan struct{}, 4), release: make(chan struct{})}
}

func (w *waitTool) Definition() tools.Definition {
	return tools.Definition{Name: "http_fetch", Description: "Waits.", Schema: json.RawMessage(`{"type":"object"}`)}
}

func (w *waitTool) Call(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
	w.entered <- struct{}{}
	<-w.release
	return tools.TextResult("waited"), nil
}

func (w *waitTool) catalog() tools.Catalog {
	return tools.Catalog{"http_fetch": func(map[string]any) (tools.Tool, error) { return w, nil }}
}

// userTexts returns the texts of req's user messages.
func userTexts(req llm.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == conversation.MessageUser {
			out = append(out, m.Text())
		}
	}
	return out
}

// An operator's message posted while the first round's tool runs reaches
// the second model call, once, marked as arrived during the turn, and is
// logged once; the turn that applied it leaves nothing in the inbox.
func TestSteerReachesTheNextRound(t *testing.T) {
	t.Parallel()
	wait := newWaitTool()
	model := newTurnModel(
		modelAnswer{Calls: []conversation.ToolCall{call("c1", "http_fetch", `{}`)}},
		modelAnswer{Calls: []conversation.ToolCall{call("c2", "respond", `{"message":"In metric, then.","awaiting_user_input":true}`)}},
	)
	commits := nodetest.NewCommits()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Tools: wait.catalog(), OnCommit: commits.Add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "steered", Input: "How far is it?"})
	if err != nil {
		t.Fatal(err)
	}
	<-wait.entered
	if _, err := n.Steer(ctx, rec.ID, "operator:bo", "Answer in metric units.", ""); err != nil {
		t.Fatal(err)
	}
	close(wait.release)
	commits.Wait(t, "the turn's commit", func(r store.Record) bool { return r.ID == rec.ID && r.Status.State == lifecycle.Blocked })

	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was called %d times, want 2", len(reqs))
	}
	want := "[operator message from operator:bo, sent while you were working: take it into account before you go on]\nAnswer in metric units."
	if got := userTexts(reqs[1]); !slices.Equal(got, []string{"How far is it?", want}) {
		t.Errorf("the second model call's user messages = %q, want the question and the steer once", got)
	}
	if got := userTexts(reqs[0]); len(got) != 1 {
		t.Errorf("the first model call's user messages = %q, want the question alone", got)
	}
	log, err := n.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var steers []conversation.InboxMessage
	for _, e := range log {
		if m := e.InboxMessage; m != nil && m.Kind == conversation.KindOperator {
			steers = append(steers, *m)
		}
	}
	if len(steers) != 1 || !steers[0].DuringTurn || steers[0].Content != "Answer in metric units." {
		t.Errorf("the log's operator messages = %+v, want the steer once, during the turn", steers)
	}
	if inbox, err := n.Inbox(ctx, rec.ID); err != nil || len(inbox) != 0 {
		t.Errorf("inbox after the turn = %v (%v), want empty", inbox, err)
	}
}

// A node stopped right after the checkpoint that drained a steer: the node
// that recovers the turn shows the model the steer once, and the log holds
// it once.
func TestSteerSurvivesANodeStop(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	wait := newWaitTool()
	model := newTurnModel(
		modelAnswer{Calls: []conversation.ToolCall{call("c1", "http_fetch", `{}`)}},
		modelAnswer{Hang: true}, // the first node stops during this call
		modelAnswer{Calls: []conversation.ToolCall{call("c2", "respond", `{"message":"Done.","awaiting_user_input":true}`)}},
	)
	commits := nodetest.NewCommits()
	cfg := Config{Redis: srv.Client(t), NodeID: "a", Models: map[string]llm.Model{"default": model}, Tools: wait.catalog(),
		OnCommit: commits.Add, LeaseTTL: time.Second, Grace: time.Millisecond}
	a := startNode(t, cfg)
	ctx := context.Background()
	rec, err := a.Create(ctx, NewProcess{Recipe: "steered", Input: "Go."})
	if err != nil {
		t.Fatal(err)
	}
	<-wait.entered
	if _, err := a.Steer(ctx, rec.ID, "operator:bo", "Be brief.", ""); err != nil {
		t.Fatal(err)
	}
	close(wait.release)
	model.entered(t, 1) // the steer is drained: the second call sees it
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	cfg.NodeID = "b"
	startNode(t, cfg)
	commits.Wait(t, "the recovered turn's commit", func(r store.Record) bool { return r.ID == rec.ID && r.Status.State == lifecycle.Blocked })

	steer := "[operator message from operator:bo, sent while you were working: take it into account before you go on]\nBe brief."
	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model calls = %d, want 3: node a's two, then the recovered turn's on node b", len(reqs))
	}
	last := reqs[len(reqs)-1]
	if got := userTexts(last); !slices.Equal(got, []string{"Go.", steer}) {
		t.Errorf("the recovered turn's model call saw user messages %q, want the input and the steer once", got)
	}
	log, err := a.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range log {
		if m := e.InboxMessage; m != nil && m.Content == "Be brief." {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the log holds the steer %d times, want 1", n)
	}
}

// haltedTurn starts a turn of recipe steered whose first model call hangs,
// and returns the node, the process and the model once the call runs.
func haltedTurn(t *testing.T, answers ...modelAnswer) (*Node, *store.Store, string, *turnModel, *nodetest.Commits) {
	t.Helper()
	model := newTurnModel(append([]modelAnswer{{Text: "Let me think", Hang: true}}, answers...)...)
	commits := nodetest.NewCommits()
	rdb := testutil.Redis(t)
	n := startNode(t, Config{Redis: rdb, NodeID: "runner", Models: map[string]llm.Model{"default": model}, OnCommit: commits.Add})
	rec, err := n.Create(context.Background(), NewProcess{Recipe: "steered", Input: "Think hard."})
	if err != nil {
		t.Fatal(err)
	}
	model.entered(t, 0)
	other, err := store.New(rdb, store.Config{}) // another node's view: the request goes through Redis
	if err != nil {
		t.Fatal(err)
	}
	return n, other, rec.ID, model, commits
}

// Pausing a process whose model call is midway ends the turn at once: the
// call is cut, what it wrote is kept, no further call is made; resume runs
// a turn that goes on from there.
func TestPauseHaltsTheRunningTurn(t *testing.T) {
	t.Parallel()
	n, other, pid, model, commits := haltedTurn(t,
		modelAnswer{Calls: []conversation.ToolCall{call("c1", "respond", `{"message":"Thought.","awaiting_user_input":true}`)}})
	ctx := context.Background()
	if _, _, err := other.Transition(ctx, pid, lifecycle.Pause, "operator:bo"); err != nil {
		t.Fatal(err)
	}
	rec := commits.Wait(t, "the halted turn's commit", func(r store.Record) bool { return r.ID == pid })
	if rec.Status.State != lifecycle.Paused || rec.Status.PausedFrom != lifecycle.Ready {
		t.Errorf("after the halted turn: %s, want PAUSED from READY", rec.Status)
	}
	if got := len(model.Requests()); got != 1 {
		t.Errorf("model calls = %d, want 1", got)
	}
	log, err := n.Log(ctx, pid, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(log, func(e conversation.Event) bool { return e.ChatResponse != nil && e.ChatResponse.Text == "Let me think" }) ||
		!slices.ContainsFunc(log, func(e conversation.Event) bool {
			return e.SystemNotice != nil && e.SystemNotice.Code == "turn_halted"
		}) {
		t.Errorf("the log lacks what the cut call wrote or the halt's notice: %v", log)
	}

	if _, err := n.Transition(ctx, pid, lifecycle.Resume, "operator:bo"); err != nil {
		t.Fatal(err)
	}
	commits.Wait(t, "the resumed turn's commit", func(r store.Record) bool { return r.ID == pid && r.Status.State == lifecycle.Blocked })
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d, want 2", len(reqs))
	}
	texts := userTexts(reqs[1])
	if len(texts) != 2 || !strings.Contains(texts[1], "Go on where you left off") {
		t.Errorf("the resumed turn's user messages = %q, want the input and the message to go on", texts)
	}
}

// Stopping a process whose model call is midway ends the turn at once; it
// stays DONE and nothing waits in its inbox.
func TestStopHaltsTheRunningTurn(t *testing.T) {
	t.Parallel()
	n, other, pid, model, commits := haltedTurn(t)
	ctx := context.Background()
	if _, _, err := other.Transition(ctx, pid, lifecycle.Finish, "operator:bo"); err != nil {
		t.Fatal(err)
	}
	rec := commits.Wait(t, "the halted turn's commit", func(r store.Record) bool { return r.ID == pid })
	if rec.Status.State != lifecycle.Done {
		t.Errorf("after the halted turn: %s, want DONE", rec.Status)
	}
	if got := len(model.Requests()); got != 1 {
		t.Errorf("model calls = %d, want 1", got)
	}
	if inbox, err := n.Inbox(ctx, pid); err != nil || len(inbox) != 0 {
		t.Errorf("inbox = %v (%v), want empty", inbox, err)
	}
}

// A halt whose signal never came (here the record is changed behind the
// scripts' back, so nothing is published) reaches the turn at its lease's
// renewal. (A short TTL, but not so short that a loaded machine lets the
// lease lapse: the turn would then be abandoned, not halted.)
func TestRenewalHaltsATurnWhoseSignalWasLost(t *testing.T) {
	t.Parallel()
	model := newTurnModel(modelAnswer{Hang: true})
	commits := nodetest.NewCommits()
	rdb := testutil.Redis(t)
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, OnCommit: commits.Add, LeaseTTL: 1500 * time.Millisecond})
	rec, err := n.Create(context.Background(), NewProcess{Recipe: "steered", Input: "Think."})
	if err != nil {
		t.Fatal(err)
	}
	model.entered(t, 0)
	if err := rdb.HSet(context.Background(), store.Key(store.DefaultPartitions, rec.ID, "proc"), "state", "PAUSED", "paused_from", "RUNNING").Err(); err != nil {
		t.Fatal(err)
	}
	got := commits.Wait(t, "the halted turn's commit", func(r store.Record) bool { return r.ID == rec.ID })
	if got.Status.State != lifecycle.Paused || got.Status.PausedFrom != lifecycle.Ready {
		t.Errorf("after the halted turn: %s, want PAUSED from READY", got.Status)
	}
}

// What a user's message sent while the first round's tool runs does, as
// the recipe's steering.user_messages says: queue keeps it for the next
// turn; steer brings it to the second model call.
func TestUserMessagesDuringATurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		recipe string
		steers bool
	}{{"steered", false}, {"users-steer", true}} {
		t.Run(tc.recipe, func(t *testing.T) {
			t.Parallel()
			wait := newWaitTool()
			model := newTurnModel(
				modelAnswer{Calls: []conversation.ToolCall{call("c1", "http_fetch", `{}`)}},
				modelAnswer{Calls: []conversation.ToolCall{call("c2", "respond", `{"message":"Noted.","awaiting_user_input":true}`)}},
			)
			commits := nodetest.NewCommits()
			n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Tools: wait.catalog(), OnCommit: commits.Add})
			ctx := context.Background()
			rec, err := n.Create(ctx, NewProcess{Recipe: tc.recipe, Input: "Look it up.", Owner: "ada"})
			if err != nil {
				t.Fatal(err)
			}
			<-wait.entered
			if _, err := n.Send(ctx, rec.ID, "user:ada", "In French, please.", ""); err != nil {
				t.Fatal(err)
			}
			close(wait.release)
			commits.Wait(t, "the first turn's commit", func(r store.Record) bool { return r.ID == rec.ID })
			second := userTexts(model.Requests()[1])
			reached := slices.ContainsFunc(second, func(s string) bool { return strings.HasSuffix(s, "In French, please.") })
			if reached != tc.steers {
				t.Errorf("the second model call's user messages = %q; the message reached it: %t, want %t", second, reached, tc.steers)
			}
			if !tc.steers { // queued: it wakes the next turn, which reads it as sent then
				// (The first turn's commit leaves the process READY, the
				// queued message having unblocked it; commits of two turns
				// may be reported in either order.)
				commits.Wait(t, "the second turn's commit", func(r store.Record) bool { return r.ID == rec.ID && r.Status.State == lifecycle.Blocked })
				third := userTexts(model.Requests()[2])
				if third[len(third)-1] != "In French, please." {
					t.Errorf("the next turn's user messages = %q, want the queued message last, as sent", third)
				}
			}
		})
	}
}

// A user's message under steering.user_messages: interrupt cuts the model
// call in flight: what it wrote is kept for the model, and the next call
// sees it and the message, once.
func TestUserMessageInterrupts(t *testing.T) {
	t.Parallel()
	model := newTurnModel(
		modelAnswer{Text: "Drafting a long", Hang: true},
		modelAnswer{Calls: []conversation.ToolCall{call("c1", "respond", `{"message":"Short, then.","awaiting_user_input":true}`)}},
	)
	commits := nodetest.NewCommits()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: commits.Add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "users-interrupt", Input: "Write an essay.", Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	model.entered(t, 0)
	if _, err := n.Send(ctx, rec.ID, "user:ada", "Keep it short.", ""); err != nil {
		t.Fatal(err)
	}
	got := commits.Wait(t, "the turn's commit", func(r store.Record) bool { return r.ID == rec.ID })
	if got.Status.State != lifecycle.Blocked {
		t.Errorf("after the turn: %s, want BLOCKED", got.Status)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d, want 2", len(reqs))
	}
	var seen []string
	for _, m := range reqs[1].Messages {
		seen = append(seen, string(m.Role)+": "+m.Text())
	}
	want := []string{"user: Write an essay.", "assistant: Drafting a long",
		"user: [user message, sent while you were working: take it into account before you go on]\nKeep it short."}
	if !slices.Equal(seen, want) {
		t.Errorf("the second call saw %q, want %q", seen, want)
	}
	if inbox, err := n.Inbox(ctx, rec.ID); err != nil || len(inbox) != 0 {
		t.Errorf("inbox = %v (%v), want empty", inbox, err)
	}
}
