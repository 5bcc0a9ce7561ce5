package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

// payments is a tool that needs approval: it records the call key of each
// run.
type payments struct {
	mu         sync.Mutex
	keys       []string
	idempotent bool
}

func (p *payments) Definition() tools.Definition {
	return tools.Definition{Name: "pay", Description: "Pays.", Schema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer"}},"required":["amount"]}`),
		Idempotent: p.idempotent}
}

func (p *payments) Call(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
	caller, _ := tools.CallerFrom(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, caller.CallKey)
	return tools.TextResult("paid"), nil
}

func (p *payments) runs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.keys...)
}

// approvalTurn is a turn of a recipe whose pay tool needs an operator's
// approval within an hour, answered by parts.
func approvalTurn(t *testing.T, pay *payments, reqs *[]*llm.Request, parts ...[]llm.Part) engines.Turn {
	t.Helper()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{
		{Name: tools.Respond}, {Name: "lookup"},
		{Name: "pay", Approval: &recipes.Approval{By: recipes.ApproverOperator, Timeout: recipes.Duration(time.Hour)}},
	}}
	catalog := enginetest.Catalog()
	catalog["pay"] = func(map[string]any) (tools.Tool, error) { return pay, nil }
	reg, err := toolset.Build(catalog, r)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	turn := turnWith(r, callModel{n: &n, parts: parts, reqs: reqs}, reg)
	turn.Tools = reg
	return turn
}

func call(id, name, args string) llm.Part {
	return llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

var at = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

func run(t *testing.T, turn *engines.Turn) engines.Outcome {
	t.Helper()
	ctx := tools.WithCaller(context.Background(), tools.Caller{ProcessID: "p1", TurnID: turn.ID})
	out, err := (&Engine{Clock: func() time.Time { return at }}).Run(ctx, turn,
		engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A round that calls a tool needing approval runs its other calls, and the
// turn ends waiting for the decision, logged, without another model call;
// the approved call then runs once, under the key of the turn that asked,
// and the model sees its result before what the inbox brought meanwhile.
func TestApprovalApproved(t *testing.T) {
	t.Parallel()
	pay := &payments{}
	var reqs []*llm.Request
	turn := approvalTurn(t, pay, &reqs, []llm.Part{call("c1", "lookup", `{"query":"price"}`), call("c2", "pay", `{"amount":5}`)})
	out := run(t, &turn)
	deadline := at.Add(time.Hour)
	want := []conversation.PendingCall{{CallID: "c2", Name: "pay", Arguments: json.RawMessage(`{"amount":5}`), By: "operator", Key: "t1/1",
		Requested: at, Deadline: &deadline}}
	if diff := cmp.Diff(want, out.Approvals); diff != "" {
		t.Fatalf("the calls the turn waits for (-want +got):\n%s", diff)
	}
	last := out.Events[len(out.Events)-1]
	if out.Next != lifecycle.AwaitUser || last.ApprovalRequested == nil || len(reqs) != 1 || len(pay.runs()) != 0 {
		t.Fatalf("next %s, last event %s, %d model calls, pay ran %v; want await_user after approval_requested, 1 call, pay not run",
			out.Next, last.Type, len(reqs), pay.runs())
	}
	var results []string
	for _, e := range out.Events {
		if r := e.ToolCallResponse; r != nil {
			results = append(results, r.Name)
		}
	}
	if diff := cmp.Diff([]string{"lookup"}, results); diff != "" {
		t.Errorf("results of the asking turn (-want +got):\n%s", diff)
	}

	reqs = nil
	next := approvalTurn(t, pay, &reqs, []llm.Part{respondCall("Paid.")})
	next.ID = "t2"
	next.History = out.Events
	next.Approvals = out.Approvals
	next.Current = []conversation.Event{
		conversation.NewTurnStart("wake"),
		by(conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "done yet?"), "user:ada"),
		by(conversation.NewInboxMessage("2-0", conversation.KindApproval, "operator:bo", `{"call_id":"c2","decision":"approve"}`), "operator:bo"),
	}
	out = run(t, &next)
	if diff := cmp.Diff([]string{"t1/1"}, pay.runs()); diff != "" {
		t.Fatalf("pay's runs (-want +got):\n%s", diff)
	}
	if out.Next != lifecycle.AwaitUser || out.Approvals != nil || len(reqs) != 1 {
		t.Fatalf("next %s, approvals %+v, %d model calls; want the turn answered by respond", out.Next, out.Approvals, len(reqs))
	}
	var decided *conversation.Event
	for i, e := range out.Events {
		if e.ApprovalDecided != nil {
			decided = &out.Events[i]
		}
	}
	if decided == nil || decided.By != "operator:bo" || decided.ApprovalDecided.Decision != conversation.Approve {
		t.Errorf("approval_decided = %+v; want c2 approved by operator:bo", decided)
	}
	msgs := reqs[0].Messages
	var roles []string
	for _, m := range msgs[len(msgs)-4:] {
		roles = append(roles, string(m.Role)+":"+m.ToolCallID+m.Text())
	}
	wantRoles := []string{"assistant:", "tool:c1data about price", "tool:c2paid", "user:done yet?"}
	if diff := cmp.Diff(wantRoles, roles); diff != "" {
		t.Errorf("the end of the model's request (-want +got):\n%s", diff)
	}
}

func by(e conversation.Event, who string) conversation.Event {
	e.By = who
	return e
}

// A rejected call does not run; the model gets the reason as its error
// result. With two calls waiting, a decision on one applies it and the turn
// goes on waiting for the other without calling the model.
func TestApprovalRejectedAndPartly(t *testing.T) {
	t.Parallel()
	pay := &payments{}
	var reqs []*llm.Request
	pending := []conversation.PendingCall{
		{CallID: "c1", Name: "pay", Arguments: json.RawMessage(`{"amount":5}`), By: "operator", Key: "t0/0"},
		{CallID: "c2", Name: "pay", Arguments: json.RawMessage(`{"amount":7}`), By: "operator", Key: "t0/1"},
	}
	turn := approvalTurn(t, pay, &reqs, []llm.Part{respondCall("Not paid.")})
	turn.History = []conversation.Event{conversation.NewToolCallRequest("c1", "pay", pending[0].Arguments), conversation.NewToolCallRequest("c2", "pay", pending[1].Arguments)}
	turn.Approvals = pending
	turn.Current = []conversation.Event{
		conversation.NewTurnStart("wake"),
		by(conversation.NewInboxMessage("1-0", conversation.KindApproval, "operator:bo", `{"call_id":"c2","decision":"reject","reason":"too much"}`), "operator:bo"),
	}
	out := run(t, &turn)
	if len(reqs) != 0 || len(pay.runs()) != 0 || out.Next != lifecycle.AwaitUser {
		t.Fatalf("%d model calls, pay ran %v, next %s; want no call, no run, await_user", len(reqs), pay.runs(), out.Next)
	}
	if diff := cmp.Diff(pending[:1], out.Approvals); diff != "" {
		t.Errorf("still waiting (-want +got):\n%s", diff)
	}
	res := out.Events[len(out.Events)-1].ToolCallResponse
	if res == nil || res.CallID != "c2" || !res.IsError || !strings.Contains(conversation.TextOf(res.Content), "operator:bo rejected it: too much") {
		t.Errorf("c2's result = %+v; want an error with the reason", res)
	}
}

// A turn resumed after its node stopped between applying an approval and
// saving the tool's result runs an idempotent tool again under the same key,
// and tells the model that any other may or may not have run.
func TestApprovalResumedAfterACrash(t *testing.T) {
	t.Parallel()
	for _, idempotent := range []bool{true, false} {
		pay := &payments{idempotent: idempotent}
		var reqs []*llm.Request
		turn := approvalTurn(t, pay, &reqs, []llm.Part{respondCall("Done.")})
		turn.History = []conversation.Event{conversation.NewToolCallRequest("p1", "pay", json.RawMessage(`{"amount":5}`))}
		turn.Approvals = []conversation.PendingCall{{CallID: "p1", Name: "pay", Arguments: json.RawMessage(`{"amount":5}`), By: "operator", Key: "t0/0"}}
		turn.Current = []conversation.Event{
			conversation.NewTurnStart("wake"),
			by(conversation.NewInboxMessage("1-0", conversation.KindApproval, "operator:bo", `{"call_id":"p1","decision":"approve"}`), "operator:bo"),
			by(conversation.NewApprovalDecided(conversation.ApprovalDecision{CallID: "p1", Decision: conversation.Approve}), "operator:bo"),
		}
		out := run(t, &turn)
		var res *conversation.ToolCallResponse
		for _, e := range out.Events {
			if e.ToolCallResponse != nil && e.ToolCallResponse.CallID == "p1" {
				res = e.ToolCallResponse
			}
		}
		switch {
		case idempotent && (cmp.Diff([]string{"t0/0"}, pay.runs()) != "" || res == nil || res.IsError):
			t.Errorf("idempotent: runs %v, result %+v; want one run under t0/0 and its result", pay.runs(), res)
		case !idempotent && (len(pay.runs()) != 0 || res == nil || !strings.Contains(conversation.TextOf(res.Content), "may or may not have run")):
			t.Errorf("not idempotent: runs %v, result %+v; want no run and the orphan's error", pay.runs(), res)
		}
	}
}

// A turn that asked for approval and stopped before its commit is resumed
// waiting for it: the call that needs approval is not run as an orphan.
func TestApprovalAskedBeforeACrash(t *testing.T) {
	t.Parallel()
	pay := &payments{idempotent: true}
	var reqs []*llm.Request
	turn := approvalTurn(t, pay, &reqs)
	turn.Current = []conversation.Event{
		conversation.NewTurnStart("wake"),
		conversation.NewToolCallRequest("c2", "pay", json.RawMessage(`{"amount":5}`)),
	}
	out := run(t, &turn)
	if len(pay.runs()) != 0 || len(reqs) != 0 || out.Next != lifecycle.AwaitUser || len(out.Approvals) != 1 || out.Approvals[0].Key != "t1/0" {
		t.Fatalf("pay ran %v, %d model calls, next %s, approvals %+v; want the call waiting under key t1/0", pay.runs(), len(reqs), out.Next, out.Approvals)
	}
	if e := out.Events[len(out.Events)-1]; e.ApprovalRequested == nil {
		t.Errorf("last event %s; want approval_requested", e.Type)
	}
}

// Offline, a session plays approvals as a node does: the turn that asks
// waits, a user's message waits with it, a decision runs the call and the
// turn goes on; a decision on a call that waits for none is refused.
func TestApprovalInASession(t *testing.T) {
	t.Parallel()
	pay := &payments{}
	turn := approvalTurn(t, pay, nil, []llm.Part{call("c1", "pay", `{"amount":5}`)}, []llm.Part{respondCall("Paid.")})
	sess := engines.NewSession(&Engine{}, turn, engines.StepClock(at))
	ctx := tools.WithCaller(context.Background(), tools.Caller{ProcessID: "p1"})
	if _, err := sess.Say(ctx, "user:ada", "pay it"); err != nil {
		t.Fatal(err)
	}
	if sess.Status.State != lifecycle.Blocked || len(sess.Approvals) != 1 {
		t.Fatalf("after the asking turn: %s, waiting for %+v; want BLOCKED waiting for c1", sess.Status, sess.Approvals)
	}
	outs, err := sess.Say(ctx, "user:ada", "well?")
	if err != nil || len(outs) != 0 || sess.Status.State != lifecycle.Blocked {
		t.Fatalf("a user's message played %d turns (%v) and left %s; want none, BLOCKED", len(outs), err, sess.Status)
	}
	if _, err := sess.Decide(ctx, "operator:bo", conversation.ApprovalDecision{CallID: "c9", Decision: conversation.Approve}); !errors.Is(err, inbox.ErrNotPending) {
		t.Fatalf("a decision on c9 = %v, want ErrNotPending", err)
	}
	if _, err := sess.Decide(ctx, "operator:bo", conversation.ApprovalDecision{CallID: "c1", Decision: conversation.Approve}); err != nil {
		t.Fatal(err)
	}
	if len(pay.runs()) != 1 || sess.Approvals != nil || sess.Status.State != lifecycle.Blocked {
		t.Errorf("pay ran %v, approvals %+v, %s; want one run, none waiting, BLOCKED after respond", pay.runs(), sess.Approvals, sess.Status)
	}
}

// A rejection's reason reaches the model as the call's error result, in
// the request the turn makes next.
func TestApprovalRejectionReachesTheModel(t *testing.T) {
	t.Parallel()
	pay := &payments{}
	var reqs []*llm.Request
	turn := approvalTurn(t, pay, &reqs, []llm.Part{respondCall("Not paid.")})
	turn.History = []conversation.Event{conversation.NewToolCallRequest("p1", "pay", json.RawMessage(`{"amount":5}`))}
	turn.Approvals = []conversation.PendingCall{{CallID: "p1", Name: "pay", Arguments: json.RawMessage(`{"amount":5}`), By: "operator", Key: "t0/0"}}
	turn.Current = []conversation.Event{
		conversation.NewTurnStart("wake"),
		by(conversation.NewInboxMessage("1-0", conversation.KindApproval, "operator:bo", `{"call_id":"p1","decision":"reject","reason":"over budget"}`), "operator:bo"),
	}
	run(t, &turn)
	if len(reqs) != 1 || len(pay.runs()) != 0 {
		t.Fatalf("%d model calls, pay ran %v; want one call, no run", len(reqs), pay.runs())
	}
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	if last.Role != conversation.MessageTool || last.ToolCallID != "p1" || !last.IsError || !strings.Contains(last.Text(), "operator:bo rejected it: over budget") {
		t.Errorf("the request ends with %+v; want p1's error result with the reason", last)
	}
}
