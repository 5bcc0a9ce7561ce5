package store_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// Steer checkpoints a round and drains, in the same step, the messages of
// the kinds asked for, marked as arrived during the turn; the others stay
// in the inbox, in order, for the next turn.
func TestSteerDrainsWhatSteers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	e.post(t, "p1", user("also this"))
	e.post(t, "p1", msg(conversation.KindOperator, "operator:bo", "be brief"))
	e.post(t, "p1", msg(conversation.KindSchedule, "daily", "tick"))

	drained, err := e.s.Steer(e.ctx, c, []conversation.Event{chat("round 1")}, conversation.KindOperator)
	if err != nil {
		t.Fatal(err)
	}
	if len(drained) != 1 || drained[0].InboxMessage == nil || !drained[0].InboxMessage.DuringTurn ||
		drained[0].InboxMessage.Content != "be brief" || drained[0].Turn != "t1" || drained[0].ID == "" {
		t.Fatalf("drained = %+v, want the operator's message of turn t1, during the turn, with its log id", drained)
	}
	if diff := cmp.Diff([]string{"also this", "tick"}, e.inbox(t, "p1")); diff != "" {
		t.Errorf("inbox after the drain (-want +got):\n%s", diff)
	}
	log := e.log(t, "p1")
	if diff := cmp.Diff(describe(log[len(log)-2:]), []string{`chat "round 1"`, `inbox operator operator:bo "be brief" [t1]`}); diff != "" {
		t.Errorf("the log's end (-got +want):\n%s", diff)
	}
	if !log[len(log)-1].InboxMessage.DuringTurn {
		t.Error("the logged message is not marked as drained during the turn")
	}
	if diff := cmp.Diff(log[len(log)-1], drained[0]); diff != "" {
		t.Errorf("the drained event returned differs from the logged one (-log +returned):\n%s", diff)
	}

	// A user's message steers when the recipe says so; with none left of
	// the kinds asked for, nothing moves.
	drained, err = e.s.Steer(e.ctx, c, nil, conversation.KindOperator, conversation.KindUser)
	if err != nil || len(drained) != 1 || drained[0].InboxMessage.Content != "also this" {
		t.Fatalf("second drain = %+v, %v; want the user's message", drained, err)
	}
	if drained, err = e.s.Steer(e.ctx, c, nil, conversation.KindUser); err != nil || len(drained) != 0 {
		t.Errorf("third drain = %+v, %v; want nothing", drained, err)
	}
	if diff := cmp.Diff([]string{"tick"}, e.inbox(t, "p1")); diff != "" {
		t.Errorf("inbox after the drains (-want +got):\n%s", diff)
	}

	// The commit's wake rule judges what is left: the tick wakes the
	// READY process again.
	rec := e.commit(t, c, lifecycle.Continue)
	if !rec.Queued {
		t.Errorf("after the commit: queued = %t, want true (a tick is left)", rec.Queued)
	}
}

// A stale claim drains nothing.
func TestSteerIsFenced(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	e.post(t, "p1", msg(conversation.KindOperator, "operator:bo", "be brief"))
	e.rdb.Del(e.ctx, e.key("p1", "lease"))
	if _, err := e.s.Steer(e.ctx, c, nil, conversation.KindOperator); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Steer without the lease = %v, want ErrFenced", err)
	}
	if diff := cmp.Diff([]string{"be brief"}, e.inbox(t, "p1")); diff != "" {
		t.Errorf("inbox (-want +got):\n%s", diff)
	}
}

// Pausing, stopping or failing a RUNNING process tells the node that runs
// its turn, on the node's channel; a process no turn runs tells nobody.
func TestTransitionSignalsTheTurnsNode(t *testing.T) {
	t.Parallel()
	e := setup(t)
	sub, err := e.s.Signals(e.ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for _, ev := range []lifecycle.Event{lifecycle.Pause, lifecycle.Finish, lifecycle.Fail} {
		pid := "p_" + string(ev)
		in := user("hi")
		e.create(t, pid, &in)
		e.claim(t, pid, "t1") // node n1 (setup_test's claim)
		e.transition(t, pid, ev)
		if got := <-sub.C(); got != (store.Signal{Process: pid, What: store.Halt}) {
			t.Errorf("%s: signal = %+v, want a halt of %s", ev, got, pid)
		}
	}
	e.create(t, "p_idle", nil)
	e.transition(t, "p_idle", lifecycle.Pause)
	in := user("hi")
	e.create(t, "p_last", &in)
	e.claim(t, "p_last", "t1")
	e.transition(t, "p_last", lifecycle.Pause)
	if got := <-sub.C(); got.Process != "p_last" {
		t.Errorf("signal = %+v, want p_last's (none for p_idle, whose turn nobody runs)", got)
	}
}
