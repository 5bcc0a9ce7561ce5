package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// TestClaimDrains checks the drain: pending messages leave the inbox and
// appear once in the log, in the claim's Current.
func TestClaimDrains(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	id2 := e.post(t, "p1", msg(conversation.KindProcessEvent, "p_w", "more"))
	w := e.wake(t, "p1")
	c, err := e.s.Claim(e.ctx, w, "n1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	claimedAt := e.clock.t // Claim read the clock last
	if c.Record.Status.State != lifecycle.Running || c.Token != 1 || c.TurnID != "t1" || c.Recovered || c.Node != "n1" || c.Wake != w {
		t.Errorf("claim = %s token %d turn %s recovered %v node %s wake %+v", c.Record.Status, c.Token, c.TurnID, c.Recovered, c.Node, c.Wake)
	}
	want := []string{
		"turn_start wake [t1]",
		"state READY->RUNNING wake by node:n1 [t1]",
		`inbox user user:alice "hi" [t1]`,
		`inbox process_event p_w "more" [t1]`,
	}
	if diff := cmp.Diff(want, describe(c.Current)); diff != "" {
		t.Errorf("Current (-want +got):\n%s", diff)
	}
	if len(c.History) != 0 {
		t.Errorf("History = %v, want empty", describe(c.History))
	}
	if got := c.Current[3]; got.InboxMessage.MessageID != id2 || got.By != "p_w" {
		t.Errorf("drained event = %+v, want message id %s by p_w", got, id2)
	}
	for _, ev := range c.Current {
		if err := ev.Validate(); err != nil {
			t.Errorf("event %s: %v", ev.ID, err)
		}
		if ev.ID == "" || !ev.At.Equal(claimedAt) {
			t.Errorf("event %+v: want an id and the claim's time %s", ev, claimedAt)
		}
	}
	if got := e.inbox(t, "p1"); len(got) != 0 {
		t.Errorf("inbox = %q, want drained", got)
	}
	if diff := cmp.Diff(c.Current, e.log(t, "p1")); diff != "" {
		t.Errorf("log differs from the claim's Current (-claim +log):\n%s", diff)
	}

	// The lease is live: the same wake claimed again (a stale read) starts
	// nothing and stays pending, the turn's own.
	if _, err := e.s.Claim(e.ctx, w, "n2", "t2"); !errors.Is(err, store.ErrNothingToDo) {
		t.Fatalf("second Claim = %v, want ErrNothingToDo", err)
	}
	if got := e.pendingWakes(t); got["n1"] != 1 {
		t.Errorf("pending wakes = %v, want the turn's own wake pending", got)
	}
	if n := len(e.log(t, "p1")); n != 4 {
		t.Errorf("log has %d events after the refused claim, want 4", n)
	}

	// The next turn's History is everything before it.
	r := e.commit(t, c, lifecycle.AwaitUser, chat("hello"))
	e.post(t, "p1", user("again"))
	c2 := e.claim(t, "p1", "t2")
	if c2.Token != 2 {
		t.Errorf("second turn token = %d, want 2", c2.Token)
	}
	wantHist := append(want, `chat "hello"`, "state RUNNING->BLOCKED await_user by model [t1]", "state BLOCKED->READY user_input by user:alice")
	if diff := cmp.Diff(wantHist, describe(c2.History)); diff != "" {
		t.Errorf("second turn History (-want +got):\n%s", diff)
	}
	if c2.Record.Version != r.Version+2 {
		t.Errorf("version = %d, want %d (user_input, wake)", c2.Record.Version, r.Version+2)
	}
}

// TestClaimIdle checks wakes that find nothing to run: they are settled by
// Claim itself.
func TestClaimIdle(t *testing.T) {
	t.Parallel()
	for _, state := range []lifecycle.State{lifecycle.Blocked, lifecycle.Paused, lifecycle.Done} {
		t.Run(string(state), func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			in := user("hi")
			e.create(t, "p1", &in)
			w := e.wake(t, "p1")
			switch state {
			case lifecycle.Blocked: // a stale duplicate: made BLOCKED by hand
				e.rdb.HSet(e.ctx, e.key("p1", "proc"), "state", "BLOCKED")
			case lifecycle.Paused:
				e.transition(t, "p1", lifecycle.Pause)
			case lifecycle.Done:
				e.transition(t, "p1", lifecycle.Finish)
			}
			if _, err := e.s.Claim(e.ctx, w, "n1", "t1"); !errors.Is(err, store.ErrNothingToDo) {
				t.Fatalf("Claim = %v, want ErrNothingToDo", err)
			}
			if n, p := e.wakeEntries(t), e.pendingWakes(t); n != 0 || len(p) != 0 {
				t.Errorf("wake entries %d, pending %v; want the wake settled", n, p)
			}
			if r := e.get(t, "p1"); r.Queued {
				t.Error("queued mark kept")
			}
		})
	}
	t.Run("unknown process", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		w := store.Wake{Stream: store.WakeStream(store.DefaultPartitions, 0, "chat"), EntryID: "1-1", PID: "ghost"}
		if _, err := e.s.Claim(e.ctx, w, "n1", "t1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Claim = %v, want ErrNotFound", err)
		}
	})
}

// TestFencing checks that a claim whose lease was lost and taken by a newer
// claim can write nothing.
func TestFencing(t *testing.T) {
	t.Parallel()
	onEveryDeployment(t, testFencing)
}

func testFencing(t *testing.T, e *env) {
	in := user("hi")
	e.create(t, "p1", &in)
	old := e.claim(t, "p1", "t1")
	if err := e.s.Checkpoint(e.ctx, old, []conversation.Event{chat("round 1")}); err != nil {
		t.Fatal(err)
	}

	// n1 stalls; its lease expires (deleted here: a dead node).
	e.rdb.Del(e.ctx, e.key("p1", "lease"))
	if err := e.s.Checkpoint(e.ctx, old, []conversation.Event{chat("lost")}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Checkpoint without a lease = %v, want ErrFenced", err)
	}
	stale, err := e.s.ClaimStaleWakes(e.ctx, "n2", []string{engine}, 0, 10)
	if err != nil || len(stale) != 1 {
		t.Fatalf("ClaimStaleWakes = %v, %v; want the one wake", stale, err)
	}
	recovered, err := e.s.Claim(e.ctx, stale[0], "n2", "t9")
	if err != nil {
		t.Fatal(err)
	}
	if !recovered.Recovered || recovered.Token != old.Token+1 {
		t.Fatalf("recovery claim: recovered %v, token %d", recovered.Recovered, recovered.Token)
	}
	logBefore := e.log(t, "p1")

	// n1 comes back: every write refused, nothing written.
	if err := e.s.Checkpoint(e.ctx, old, []conversation.Event{chat("late")}); !errors.Is(err, store.ErrFenced) {
		t.Errorf("stale Checkpoint = %v, want ErrFenced", err)
	}
	if _, err := e.s.Commit(e.ctx, old, []conversation.Event{chat("late")}, lifecycle.AwaitUser, "model", nil); !errors.Is(err, store.ErrFenced) {
		t.Errorf("stale Commit = %v, want ErrFenced", err)
	}
	if _, err := e.s.RenewLease(e.ctx, old); !errors.Is(err, store.ErrFenced) {
		t.Errorf("stale RenewLease = %v, want ErrFenced", err)
	}
	if err := e.s.Release(e.ctx, old); !errors.Is(err, store.ErrFenced) {
		t.Errorf("stale Release = %v, want ErrFenced", err)
	}
	if diff := cmp.Diff(logBefore, e.log(t, "p1")); diff != "" {
		t.Errorf("stale claim changed the log (-before +after):\n%s", diff)
	}
	if r := e.get(t, "p1"); r.Status.State != lifecycle.Running {
		t.Errorf("state = %s, want RUNNING (the recovered turn's)", r.Status)
	}
	// Same node, same token, but the lease value was forged: still fenced by
	// the record's token.
	e.rdb.Set(e.ctx, e.key("p1", "lease"), "n1|1", 0)
	if err := e.s.Checkpoint(e.ctx, old, []conversation.Event{chat("forged")}); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Checkpoint with a stale token = %v, want ErrFenced", err)
	}
}

// interrupted leaves p1 RUNNING in turn t2, whose node n1 checkpointed
// "half" and died, after turn t1; before n1 dies, before runs (nil: nothing).
// It returns t2's claim and the stale wake another node now holds, n2.
func interrupted(t *testing.T, e *env, before func()) (*store.Claim, store.Wake) {
	t.Helper()
	in := user("first")
	e.create(t, "p1", &in)
	e.commit(t, e.claim(t, "p1", "t1"), lifecycle.Continue, chat("one"))
	e.post(t, "p1", user("second"))
	c := e.claim(t, "p1", "t2")
	if err := e.s.Checkpoint(e.ctx, c, []conversation.Event{chat("half")}); err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before()
	}
	e.rdb.Del(e.ctx, e.key("p1", "lease")) // n1 died
	stale, err := e.s.ClaimStaleWakes(e.ctx, "n2", []string{engine}, 0, 10)
	if err != nil || len(stale) != 1 || stale[0] != c.Wake {
		t.Fatalf("ClaimStaleWakes = %+v, %v; want the turn's wake %+v", stale, err, c.Wake)
	}
	return c, stale[0]
}

// The History and Current of the claim that recovers interrupted's turn.
var (
	interruptedHistory = []string{
		"turn_start wake [t1]", "state READY->RUNNING wake by node:n1 [t1]", `inbox user user:alice "first" [t1]`,
		`chat "one"`, "state RUNNING->READY continue by model [t1]",
	}
	interruptedCurrent = []string{
		"turn_start wake [t2]",
		"state READY->RUNNING wake by node:n1 [t2]",
		`inbox user user:alice "second" [t2]`,
		`chat "half"`,
		"state RUNNING->READY recover by node:n2 [t2]",
		"state READY->RUNNING wake by node:n2 [t2]",
	}
)

// TestRecovery checks that a RUNNING process whose node died is recovered
// into its interrupted turn, and that what arrived meanwhile is not lost.
func TestRecovery(t *testing.T) {
	t.Parallel()
	onEveryDeployment(t, testRecovery)
}

func testRecovery(t *testing.T, e *env) {
	_, stale := interrupted(t, e, func() { e.post(t, "p1", user("meanwhile")) })
	r, err := e.s.Claim(e.ctx, stale, "n2", "t3")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Recovered || r.TurnID != "t2" || r.Record.Status.State != lifecycle.Running {
		t.Errorf("recovery: recovered %v turn %s state %s; want true t2 RUNNING", r.Recovered, r.TurnID, r.Record.Status)
	}
	if diff := cmp.Diff(interruptedCurrent, describe(r.Current)); diff != "" {
		t.Errorf("Current (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(interruptedHistory, describe(r.History)); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
	// Not drained: the message that came in meanwhile waits, and the commit
	// wakes the process for it.
	if diff := cmp.Diff([]string{"meanwhile"}, e.inbox(t, "p1")); diff != "" {
		t.Errorf("inbox (-want +got):\n%s", diff)
	}
	rec, err := e.s.Commit(e.ctx, r, []conversation.Event{chat("done")}, lifecycle.Continue, "model", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status.State != lifecycle.Ready || !rec.Queued || e.wakeEntries(t) != 1 || len(e.pendingWakes(t)) != 0 {
		t.Errorf("after the recovered commit: %s queued %v, %d wake entries, pending %v; want READY, one new wake",
			rec.Status, rec.Queued, e.wakeEntries(t), e.pendingWakes(t))
	}
}

// TestClaimOtherWakeDuringTurn covers a wake enqueued while a turn runs
// (the process was paused and resumed): it is settled, and the turn's
// commit enqueues the wake the message needs.
func TestClaimOtherWakeDuringTurn(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	e.transition(t, "p1", lifecycle.Pause)
	e.post(t, "p1", user("meanwhile"))
	if r := e.transition(t, "p1", lifecycle.Resume); r.Status.State != lifecycle.Ready || !r.Queued {
		t.Fatalf("resumed: %s queued %v; want READY queued", r.Status, r.Queued)
	}
	w := e.wake(t, "p1")
	if _, err := e.s.Claim(e.ctx, w, "n1", "t2"); !errors.Is(err, store.ErrNothingToDo) {
		t.Fatalf("Claim under a live lease = %v, want ErrNothingToDo", err)
	}
	if p := e.pendingWakes(t); p["n1"] != 1 {
		t.Errorf("pending = %v, want only the turn's own wake", p)
	}
	r, err := e.s.Commit(e.ctx, c, nil, lifecycle.AwaitUser, "model", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Resumed as READY (its turn given up by the lifecycle); the commit
	// keeps that state and wakes it for the message.
	if r.Status.State != lifecycle.Ready || !r.Queued || e.wakeEntries(t) != 1 {
		t.Errorf("after commit: %s queued %v, %d wakes; want READY, queued, one wake", r.Status, r.Queued, e.wakeEntries(t))
	}
	c2 := e.claim(t, "p1", "t2")
	if got := describe(c2.Current)[2:]; !cmp.Equal(got, []string{`inbox user user:alice "meanwhile" [t2]`}) {
		t.Errorf("drained %v", got)
	}
}

// ClaimAfter returns only the history the caller lacks.
func TestClaimAfter(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("first")
	e.create(t, "p1", &in)
	c1 := e.claim(t, "p1", "t1")
	if _, err := e.s.Commit(e.ctx, c1, nil, lifecycle.AwaitUser, "engine", nil); err != nil {
		t.Fatal(err)
	}
	known := c1.Current[len(c1.Current)-1].ID
	e.post(t, "p1", user("second"))
	c2, err := e.s.ClaimAfter(e.ctx, e.wake(t, "p1"), "n1", "t2", known, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c2.HistoryAfter != known {
		t.Fatalf("HistoryAfter = %q, want %q", c2.HistoryAfter, known)
	}
	// After the known id: the commit's state change and the unblock.
	want := []string{
		"state RUNNING->BLOCKED await_user by engine [t1]",
		`state BLOCKED->READY user_input by user:alice`,
	}
	if diff := cmp.Diff(want, describe(c2.History)); diff != "" {
		t.Errorf("History after %s (-want +got):\n%s", known, diff)
	}
	full, err := e.s.Log(e.ctx, "p1", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c1.Current) + len(c2.History) + len(c2.Current); got != len(full) {
		t.Errorf("known + history + current = %d events, the log has %d", got, len(full))
	}

	// With the record the caller kept from the last commit, the claim
	// reads back only what turns change; the record is the stored one.
	kept, err := e.s.Commit(e.ctx, c2, nil, lifecycle.AwaitUser, "engine", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.post(t, "p1", user("third"))
	w := e.wake(t, "p1")
	other := kept
	other.ID = "p2"
	if _, err := e.s.ClaimAfter(e.ctx, w, "n1", "t3", "", &other); err == nil {
		t.Error("ClaimAfter with another process's record: no error")
	}
	c3, err := e.s.ClaimAfter(e.ctx, w, "n1", "t3", "", &kept)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e.get(t, "p1"), c3.Record, cmpopts.IgnoreFields(store.Record{}, "Inbox")); diff != "" {
		t.Errorf("record of a claim given the kept one (-stored +claimed):\n%s", diff)
	}
}

// A claim after a known id reads on when more was written since than its
// first read takes (an operator paused and resumed the process, then a
// message came).
func TestClaimAfterManyWrites(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("first")
	e.create(t, "p1", &in)
	c1 := e.claim(t, "p1", "t1")
	known := c1.Current[len(c1.Current)-1].ID
	e.commit(t, c1, lifecycle.AwaitUser)
	e.transition(t, "p1", lifecycle.Pause)
	e.transition(t, "p1", lifecycle.Resume)
	e.post(t, "p1", user("second"))
	c2, err := e.s.ClaimAfter(e.ctx, e.wake(t, "p1"), "n1", "t2", known, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c2.HistoryAfter != known {
		t.Errorf("HistoryAfter = %q, want %q", c2.HistoryAfter, known)
	}
	full, err := e.s.Log(e.ctx, "p1", known, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := append(append([]conversation.Event{}, c2.History...), c2.Current...); !sameJSON(t, full, got) {
		t.Errorf("History+Current is not the log after %s:\nclaim %q\nlog   %q", known, describe(got), describe(full))
	}
	if len(c2.History) != 4 {
		t.Errorf("History has %d events, want 4 (the commit's, the pause, the resume, the unblock): %q", len(c2.History), describe(c2.History))
	}
}

// A recovering claim given an id at or past its turn's start (a node kept
// the log of the interrupted turn) reads the history whole: the turn's
// events belong in Current.
func TestClaimAfterPastTheTurnStart(t *testing.T) {
	t.Parallel()
	for _, at := range []string{"turn_start", "checkpoint"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			c, stale := interrupted(t, e, nil)
			known := c.Current[0].ID
			if at == "checkpoint" {
				known = c.Appended[len(c.Appended)-1].ID
			}
			r, err := e.s.ClaimAfter(e.ctx, stale, "n2", "t3", known, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.HistoryAfter != "" {
				t.Errorf("HistoryAfter = %q, want \"\" (the whole history)", r.HistoryAfter)
			}
			if diff := cmp.Diff(interruptedHistory, describe(r.History)); diff != "" {
				t.Errorf("History (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(interruptedCurrent, describe(r.Current)); diff != "" {
				t.Errorf("Current (-want +got):\n%s", diff)
			}
		})
	}
}

// A claim's Appended holds what its checkpoints and commit wrote, ids and
// all, so that History, Current and Appended are the whole log; a writer
// coming in between stops it (Gapless false).
func TestClaimAppended(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hello")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	if !c.Gapless {
		t.Fatal("a fresh claim is not Gapless")
	}
	if err := e.s.Checkpoint(e.ctx, c, []conversation.Event{chat("one"), chat("two")}); err != nil {
		t.Fatal(err)
	}
	// A message during the turn: the commit's wake rule unblocks the
	// process at once, one more event the commit writes itself.
	if _, _, err := e.s.Post(e.ctx, "p1", user("meanwhile")); err != nil {
		t.Fatal(err)
	}
	if r := e.commit(t, c, lifecycle.AwaitUser, chat("three")); r.Status.State != lifecycle.Ready {
		t.Fatalf("after the commit: %s, want READY (unblocked by the message)", r.Status)
	}
	if got := describe(c.Appended[len(c.Appended)-2:]); !slices.Equal(got, []string{
		"state RUNNING->BLOCKED await_user by model [t1]", "state BLOCKED->READY user_input by user:alice"}) {
		t.Errorf("the commit's own events = %q", got)
	}
	kept := append(append(append([]conversation.Event{}, c.History...), c.Current...), c.Appended...)
	if !c.Gapless || !sameJSON(t, e.log(t, "p1"), kept) {
		t.Errorf("gapless %v; History+Current+Appended is not the log:\nkept %+v\nlog  %+v", c.Gapless, kept, e.log(t, "p1"))
	}

	// An operator pauses the process during the next turn: the claim no
	// longer knows the log's end and says so.
	if _, _, err := e.s.Post(e.ctx, "p1", user("more")); err != nil {
		t.Fatal(err)
	}
	c = e.claim(t, "p1", "t2")
	e.transition(t, "p1", lifecycle.Pause)
	if err := e.s.Checkpoint(e.ctx, c, []conversation.Event{chat("four")}); err != nil {
		t.Fatal(err)
	}
	e.commit(t, c, lifecycle.AwaitUser, chat("five"))
	if c.Gapless || len(c.Appended) != 0 {
		t.Errorf("after a pause in between: gapless %v, appended %d; want false, 0", c.Gapless, len(c.Appended))
	}
}

// sameJSON reports whether two event lists encode alike.
func sameJSON(t *testing.T, a, b []conversation.Event) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
