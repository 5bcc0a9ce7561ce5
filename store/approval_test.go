package store_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

func decision(call string, d conversation.Decision) store.Message {
	return inbox.Approval(conversation.ApprovalDecision{CallID: call, Decision: d, Reason: "checked"}, "operator:bob")
}

// A turn whose calls wait for approval leaves the record saying so and the
// process listed; a decision for one call wakes it; a decision that comes
// while the next turn runs stands after that turn's commit (it is in the
// inbox, and the call cannot be decided again); a commit that leaves no call
// waiting clears it all; so does a stop.
func TestApprovals(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("fetch it")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	calls := []conversation.PendingCall{
		{CallID: "c1", Name: "http_fetch", Arguments: []byte(`{"url":"https://a"}`), By: conversation.ApproverOperator, Key: "t1/0"},
		{CallID: "c2", Name: "pay", By: conversation.ApproverUser, Key: "t1/1"},
	}
	r, err := e.s.Commit(e.ctx, c, nil, lifecycle.AwaitUser, "model", nil, calls...)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.State != lifecycle.Blocked || r.Waiting != inbox.WaitingApproval {
		t.Fatalf("after the commit: %s waiting %q; want BLOCKED waiting for approval", r.Status, r.Waiting)
	}
	if diff := cmp.Diff(calls, e.get(t, "p1").Approvals); diff != "" {
		t.Errorf("the record's approvals (-want +got):\n%s", diff)
	}
	listed, err := e.s.Approvals(e.ctx)
	if err != nil || len(listed) != 1 || listed[0].ID != "p1" {
		t.Fatalf("Approvals() = %+v, %v; want p1", listed, err)
	}

	e.post(t, "p1", user("any news?")) // waits for the decisions
	if st := e.get(t, "p1").Status.State; st != lifecycle.Blocked {
		t.Fatalf("a user's message moved the process to %s", st)
	}
	e.post(t, "p1", decision("c1", conversation.Approve))
	c = e.claim(t, "p1", "t2")
	e.post(t, "p1", decision("c2", conversation.Reject)) // during the turn
	var np *inbox.NotPendingError
	if _, _, err := e.s.Post(e.ctx, "p1", decision("c2", conversation.Approve)); !errors.As(err, &np) || !np.Decided || np.CallID != "c2" {
		t.Fatalf("a second decision on c2 = %v, want decided already", err)
	}
	// The turn saw only c1's decision: c2 still waits, as far as it knows.
	r, err = e.s.Commit(e.ctx, c, nil, lifecycle.AwaitUser, "model", nil, calls[1])
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.State != lifecycle.Ready || !r.Queued {
		t.Fatalf("after a commit with c2's decision in the inbox: %s queued %v; want READY, queued", r.Status, r.Queued)
	}
	if _, _, err := e.s.Post(e.ctx, "p1", decision("c2", conversation.Approve)); !errors.As(err, &np) || !np.Decided {
		t.Fatalf("c2 decided again after the commit = %v, want decided already", err)
	}
	if _, _, err := e.s.Post(e.ctx, "p1", decision("c1", conversation.Approve)); !errors.As(err, &np) || np.Decided {
		t.Fatalf("c1, settled by the turn = %v, want not pending", err)
	}

	c = e.claim(t, "p1", "t3")
	r = e.commit(t, c, lifecycle.AwaitUser)
	if r.Waiting != inbox.WaitingUser || r.Approvals != nil {
		t.Errorf("after a commit with no call waiting: waiting %q, approvals %+v; want none", r.Waiting, r.Approvals)
	}
	if listed, _ := e.s.Approvals(e.ctx); len(listed) != 0 {
		t.Errorf("Approvals() = %+v after the calls were settled, want none", listed)
	}

	e.create(t, "p2", &in)
	if _, err := e.s.Commit(e.ctx, e.claim(t, "p2", "t1"), nil, lifecycle.AwaitUser, "model", nil, calls[0]); err != nil {
		t.Fatal(err)
	}
	e.transition(t, "p2", lifecycle.Finish) // stopped while it waits
	if r := e.get(t, "p2"); r.Waiting != inbox.WaitingUser || r.Approvals != nil {
		t.Errorf("a stopped process still waits for %q: %+v", r.Waiting, r.Approvals)
	}
	if listed, _ := e.s.Approvals(e.ctx); len(listed) != 0 {
		t.Errorf("Approvals() = %+v after the stop, want none", listed)
	}
}
