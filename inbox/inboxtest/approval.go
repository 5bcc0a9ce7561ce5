package inboxtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
)

// decision is the approval message of an operator's decision on call.
func decision(call string, d conversation.Decision) inbox.Message {
	return inbox.Approval(conversation.ApprovalDecision{CallID: call, Decision: d}, "operator:olga")
}

// calls are calls waiting for approval: the first an operator's to decide,
// the others a user's.
func calls(ids ...string) []conversation.PendingCall {
	out := make([]conversation.PendingCall, len(ids))
	for i, id := range ids {
		by := conversation.ApproverUser
		if i == 0 {
			by = conversation.ApproverOperator
		}
		out[i] = conversation.PendingCall{CallID: id, Name: "http_fetch", By: by, Key: fmt.Sprintf("t0/%d", i)}
	}
	return out
}

// notPending checks that m, posted to pid, is refused as deciding a call
// that waits for no decision (decided: decided already).
func notPending(t *testing.T, in inbox.Inbox, pid string, m inbox.Message, decided bool) {
	t.Helper()
	id, dup, err := in.Post(context.Background(), pid, m)
	var np *inbox.NotPendingError
	if !errors.Is(err, inbox.ErrNotPending) || !errors.As(err, &np) || np.PID != pid || np.Decided != decided || id != "" || dup {
		t.Fatalf("Post(%s) = %q, dup %v, %v; want an *inbox.NotPendingError for %s, decided %v", m.Content, id, dup, err, pid, decided)
	}
}

// testApprovals checks a process whose tool calls wait for a person's
// approval: a user's message waits for the decisions, an operator's and a
// decision unblock it, each call is decided once, and a decision for a call
// that waits for none is refused.
func testApprovals(t *testing.T, newHarness func(*testing.T) Harness) {
	blockedBy := func(who ...string) Observation {
		return Observation{Status: ready, Queued: true, Unblocked: who}
	}
	t.Run("a user's message waits, a decision unblocks, each call is decided once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, pid := h.Make(t, running, 2)
		h.AwaitApproval(t, pid, calls("c1", "c2"))
		post(t, in, pid, message(conversation.KindUser, "any news?"))
		post(t, in, pid, tick("tick"))
		waiting := Observation{Status: blocked}
		check(t, h, in, pid, waiting, []string{"user any news?", "schedule tick"})
		notPending(t, in, pid, decision("c9", conversation.Approve), false)
		byUser := inbox.Approval(conversation.ApprovalDecision{CallID: "c1", Decision: conversation.Approve}, "user:ada")
		if id, dup, err := in.Post(context.Background(), pid, byUser); !errors.Is(err, inbox.ErrOperatorOnly) || id != "" || dup {
			t.Fatalf("a user's decision on an operator's call = %q, dup %v, %v; want ErrOperatorOnly", id, dup, err)
		}

		first := decision("c1", conversation.Approve)
		first.IdempotencyKey = "k1"
		id := post(t, in, pid, first) // beyond the limit: a decision is never refused for a full inbox
		check(t, h, in, pid, blockedBy("operator:olga"), []string{"user any news?", "schedule tick", "approval " + first.Content})
		if again, dup, err := in.Post(context.Background(), pid, first); err != nil || !dup || again != id {
			t.Fatalf("the decision again with its key = %q, dup %v, %v; want %q, dup", again, dup, err, id)
		}
		notPending(t, in, pid, decision("c1", conversation.Reject), true)
		post(t, in, pid, inbox.Approval(conversation.ApprovalDecision{CallID: "c2", Decision: conversation.Reject}, "user:ada")) // a user's to decide
		notPending(t, in, pid, decision("c2", conversation.Reject), true)
	})
	t.Run("an operator's message unblocks", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, pid := h.Make(t, running, 0)
		h.AwaitApproval(t, pid, calls("c1"))
		post(t, in, pid, message(conversation.KindOperator, "go on"))
		check(t, h, in, pid, blockedBy("operator:olga"), []string{"operator go on"})
	})
	t.Run("a process whose calls wait for nothing takes no decision", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, pid := h.Make(t, blocked, 0)
		notPending(t, in, pid, decision("c1", conversation.Approve), false)
		check(t, h, in, pid, Observation{Status: blocked}, []string{})
	})
	t.Run("resumed, a user's message still waits for the decisions", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, pid := h.Make(t, running, 0)
		h.AwaitApproval(t, pid, calls("c1"))
		h.Transition(t, pid, lifecycle.Pause)
		post(t, in, pid, message(conversation.KindUser, "hello?"))
		post(t, in, pid, decision("c1", conversation.Approve)) // taken while PAUSED; judged on resume
		h.Transition(t, pid, lifecycle.Resume)
		check(t, h, in, pid, blockedBy("operator:olga"), []string{"user hello?", "approval " + decision("c1", conversation.Approve).Content})
	})
	t.Run("resumed without a decision, it stays blocked", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, pid := h.Make(t, running, 0)
		h.AwaitApproval(t, pid, calls("c1"))
		h.Transition(t, pid, lifecycle.Pause)
		post(t, in, pid, message(conversation.KindUser, "hello?"))
		h.Transition(t, pid, lifecycle.Resume)
		check(t, h, in, pid, Observation{Status: blocked}, []string{"user hello?"})
	})
}
