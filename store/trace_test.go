package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// Trace parents of the tests: who posted each message.
const (
	traceCreate = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	tracePost   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceNotify = "00-11111111111111111111111111111111-2222222222222222-01"
)

// A message's trace parent travels with it, from every kind of post (a
// create's first message, a post, a worker's report) to the claim that
// drains it; messages without one add nothing to the claim.
func TestClaimReturnsTraceParents(t *testing.T) {
	t.Parallel()
	e := setupIn(t, 1) // its workers are named
	in := user("first")
	in.TraceParent = traceCreate
	e.create(t, "p1", &in)
	first := e.claim(t, "p1", "t1")
	if diff := cmp.Diff([]string{traceCreate}, first.TraceParents); diff != "" {
		t.Errorf("TraceParents of t1 (-want +got):\n%s", diff)
	}
	e.commit(t, first, lifecycle.Continue)
	e.post(t, "p1", user("untraced"))
	second := user("second")
	second.TraceParent = tracePost
	e.post(t, "p1", second)
	c := e.claim(t, "p1", "t2")
	if diff := cmp.Diff([]string{tracePost}, c.TraceParents); diff != "" {
		t.Errorf("TraceParents of t2 (-want +got):\n%s", diff)
	}

	task := msg(conversation.KindProcessEvent, "p1", "compute")
	if _, err := e.s.Create(e.ctx, store.NewProcess{ID: "child", Recipe: "worker", Engine: engine, Parent: "p1", Depth: 1, Input: &task}); err != nil {
		t.Fatal(err)
	}
	child := e.claim(t, "child", "w1")
	if child.TraceParents != nil {
		t.Errorf("TraceParents of a claim that drained none = %q, want none", child.TraceParents)
	}
	n := &store.Notify{PID: "p1", Message: store.Message{Content: "42", TraceParent: traceNotify}}
	if _, err := e.s.Commit(e.ctx, child, nil, lifecycle.Finish, "model", n); err != nil {
		t.Fatal(err)
	}
	msgs, err := e.s.Inbox(e.ctx, "p1")
	if err != nil || len(msgs) != 1 || msgs[0].TraceParent != traceNotify {
		t.Errorf("p1's inbox = %+v, %v; want the report with its trace parent", msgs, err)
	}
}
