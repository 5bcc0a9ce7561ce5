package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// TestCommit runs a turn, lets things happen during it, commits, and
// checks the record, the wake queue and the end of the log.
func TestCommit(t *testing.T) {
	t.Parallel()
	type want struct {
		status  lifecycle.Status
		queued  bool
		wakes   int      // wake entries after the commit
		version int64    // added by the commit and what follows it
		log     []string // events from the committed chat message on
	}
	tests := []struct {
		name   string
		during func(t *testing.T, e *env) // while the turn runs
		ev     lifecycle.Event
		after  func(t *testing.T, e *env) // after the commit, before checking
		want   want
	}{
		{
			name: "await_user", ev: lifecycle.AwaitUser,
			want: want{lifecycle.Status{State: lifecycle.Blocked}, false, 0, 1,
				[]string{`chat "answer"`, "state RUNNING->BLOCKED await_user by model [t1]"}},
		},
		{
			name: "continue, inbox empty: READY, not queued", ev: lifecycle.Continue,
			want: want{lifecycle.Status{State: lifecycle.Ready}, false, 0, 1,
				[]string{`chat "answer"`, "state RUNNING->READY continue by model [t1]"}},
		},
		{
			name: "continue, message arrived: queued (race 1)", ev: lifecycle.Continue,
			during: func(t *testing.T, e *env) { e.post(t, "p1", msg(conversation.KindProcessEvent, "p_w", "result")) },
			want: want{lifecycle.Status{State: lifecycle.Ready}, true, 1, 1,
				[]string{`chat "answer"`, "state RUNNING->READY continue by model [t1]"}},
		},
		{
			name: "await_user, user message arrived: unblocked and queued", ev: lifecycle.AwaitUser,
			during: func(t *testing.T, e *env) {
				e.post(t, "p1", msg(conversation.KindProcessEvent, "p_w", "result"))
				e.post(t, "p1", msg(conversation.KindOperator, "operator:bob", "hurry"))
			},
			want: want{lifecycle.Status{State: lifecycle.Ready}, true, 1, 2, []string{
				`chat "answer"`, "state RUNNING->BLOCKED await_user by model [t1]",
				"state BLOCKED->READY user_input by operator:bob",
			}},
		},
		{
			name: "await_user, only a process_event arrived: stays BLOCKED", ev: lifecycle.AwaitUser,
			during: func(t *testing.T, e *env) { e.post(t, "p1", msg(conversation.KindProcessEvent, "p_w", "result")) },
			want: want{lifecycle.Status{State: lifecycle.Blocked}, false, 0, 1,
				[]string{`chat "answer"`, "state RUNNING->BLOCKED await_user by model [t1]"}},
		},
		{
			name: "paused during the turn, await_user: resume lands BLOCKED", ev: lifecycle.AwaitUser,
			during: func(t *testing.T, e *env) { e.transition(t, "p1", lifecycle.Pause) },
			want: want{lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Blocked}, false, 0, 1,
				[]string{`chat "answer"`}},
		},
		{
			name: "paused during the turn, continue with a message: no wake until resumed", ev: lifecycle.Continue,
			during: func(t *testing.T, e *env) {
				e.transition(t, "p1", lifecycle.Pause)
				e.post(t, "p1", user("more"))
			},
			want: want{lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Ready}, false, 0, 1,
				[]string{`chat "answer"`}},
		},
		{
			name: "paused during the turn, then resumed: the message wakes it", ev: lifecycle.Continue,
			during: func(t *testing.T, e *env) {
				e.transition(t, "p1", lifecycle.Pause)
				e.post(t, "p1", user("more"))
			},
			after: func(t *testing.T, e *env) { e.transition(t, "p1", lifecycle.Resume) },
			want: want{lifecycle.Status{State: lifecycle.Ready}, true, 1, 2, []string{
				`chat "answer"`, "state PAUSED->READY resume by operator:bob",
			}},
		},
		{
			name: "paused during the turn, finish: DONE", ev: lifecycle.Finish,
			during: func(t *testing.T, e *env) { e.transition(t, "p1", lifecycle.Pause) },
			want: want{lifecycle.Status{State: lifecycle.Done}, false, 0, 1,
				[]string{`chat "answer"`, "state PAUSED->DONE finish by model [t1]"}},
		},
		{
			name: "paused during the turn, fail: FAILED", ev: lifecycle.Fail,
			during: func(t *testing.T, e *env) { e.transition(t, "p1", lifecycle.Pause) },
			want: want{lifecycle.Status{State: lifecycle.Failed}, false, 0, 1,
				[]string{`chat "answer"`, "state PAUSED->FAILED fail by model [t1]"}},
		},
		{
			name: "finish", ev: lifecycle.Finish,
			during: func(t *testing.T, e *env) { e.post(t, "p1", user("too late")) },
			want: want{lifecycle.Status{State: lifecycle.Done}, false, 0, 1,
				[]string{`chat "answer"`, "state RUNNING->DONE finish by model [t1]"}},
		},
		{
			name: "fail", ev: lifecycle.Fail,
			want: want{lifecycle.Status{State: lifecycle.Failed}, false, 0, 1,
				[]string{`chat "answer"`, "state RUNNING->FAILED fail by model [t1]"}},
		},
		{
			name: "stopped by an operator during the turn: events kept, DONE stays", ev: lifecycle.AwaitUser,
			during: func(t *testing.T, e *env) { e.transition(t, "p1", lifecycle.Finish) },
			want:   want{lifecycle.Status{State: lifecycle.Done}, false, 0, 0, []string{`chat "answer"`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			in := user("hi")
			e.create(t, "p1", &in)
			c := e.claim(t, "p1", "t1")
			if tt.during != nil {
				tt.during(t, e)
			}
			before := e.get(t, "p1")
			rec := e.commit(t, c, tt.ev, chat("answer"))
			if diff := cmp.Diff(e.get(t, "p1"), rec, cmpopts.IgnoreFields(store.Record{}, "Inbox")); diff != "" {
				t.Errorf("Commit returned a record that is not the stored one (-stored +returned):\n%s", diff)
			}
			if tt.after != nil {
				tt.after(t, e)
			}
			r := e.get(t, "p1")
			log := describe(e.log(t, "p1"))
			start := len(log)
			for i, l := range log {
				if l == `chat "answer"` {
					start = i
				}
			}
			got := want{r.Status, r.Queued, e.wakeEntries(t), r.Version - before.Version, log[start:]}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("after the commit (-want +got):\n%s", diff)
			}
			if e.rdb.Exists(e.ctx, e.key("p1", "lease")).Val() != 0 {
				t.Error("lease kept")
			}
			if p := e.pendingWakes(t); len(p) != 0 {
				t.Errorf("pending wakes = %v, want the turn's wake settled", p)
			}
			// The state index follows the record.
			recs, _, err := e.s.List(e.ctx, r.Status.State, "", 10)
			if err != nil || len(recs) != 1 || recs[0].ID != "p1" {
				t.Errorf("List(%s) = %v, %v; want p1", r.Status.State, recs, err)
			}
			if _, err := e.s.Commit(e.ctx, c, nil, tt.ev, "model", nil); !errors.Is(err, store.ErrFenced) {
				t.Errorf("second Commit = %v, want ErrFenced", err)
			}
		})
	}
}

func TestCommitRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	before := e.log(t, "p1")
	tests := []struct {
		name   string
		events []conversation.Event
		ev     lifecycle.Event
		by     string
	}{
		{"not a turn-ending event", nil, lifecycle.Pause, "model"},
		{"wake", nil, lifecycle.Wake, "model"},
		{"no actor", nil, lifecycle.AwaitUser, ""},
		{"invalid event", []conversation.Event{chat("ok"), {Type: conversation.TypeChatResponse}}, lifecycle.AwaitUser, "model"},
	}
	for _, tt := range tests {
		if _, err := e.s.Commit(e.ctx, c, tt.events, tt.ev, tt.by, nil); err == nil {
			t.Errorf("%s: Commit succeeded", tt.name)
		}
	}
	if err := e.s.Checkpoint(e.ctx, c, []conversation.Event{{Type: "hologram"}}); err == nil {
		t.Error("Checkpoint of an unknown event type succeeded")
	}
	if diff := cmp.Diff(before, e.log(t, "p1")); diff != "" {
		t.Errorf("refused writes changed the log:\n%s", diff)
	}
	if r := e.get(t, "p1"); r.Status.State != lifecycle.Running {
		t.Errorf("state = %s, want RUNNING", r.Status)
	}
}

// TestCommitNotify checks a worker's result: posted to the parent once,
// with the wake rule for the parent.
func TestCommitNotify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		parent     lifecycle.State
		wantState  lifecycle.State
		wantQueued bool
		wantInbox  []string
		wantPosted bool
	}{
		{"READY parent is woken", lifecycle.Ready, lifecycle.Ready, true, []string{"42"}, true},
		{"BLOCKED parent waits", lifecycle.Blocked, lifecycle.Blocked, false, []string{"42"}, true},
		{"PAUSED parent keeps it", lifecycle.Paused, lifecycle.Paused, false, []string{"42"}, true},
		{"DONE parent is skipped", lifecycle.Done, lifecycle.Done, false, []string{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setupIn(t, 1) // its workers are named
			e.processIn(t, "parent", tt.parent)
			task := msg(conversation.KindProcessEvent, "parent", "compute")
			if _, err := e.s.Create(e.ctx, store.NewProcess{ID: "child", Recipe: "worker", Engine: engine, Parent: "parent", Depth: 1, Input: &task}); err != nil {
				t.Fatal(err)
			}
			c := e.claim(t, "child", "t1")
			n := &store.Notify{PID: "parent", Message: store.Message{Content: "42"}}
			rec, err := e.s.Commit(e.ctx, c, []conversation.Event{chat("42")}, lifecycle.Finish, "model", n)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status.State != lifecycle.Done || rec.Parent != "parent" || rec.Depth != 1 {
				t.Errorf("child = %+v", rec)
			}
			p := e.get(t, "parent")
			if p.Status.State != tt.wantState || p.Queued != tt.wantQueued {
				t.Errorf("parent: %s queued %v; want %s queued %v", p.Status, p.Queued, tt.wantState, tt.wantQueued)
			}
			msgs, err := e.s.Inbox(e.ctx, "parent")
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, m := range msgs {
				got = append(got, m.Content)
				if m.Kind != conversation.KindProcessEvent || m.From != "child" {
					t.Errorf("notify message = %+v, want a process_event from child", m)
				}
			}
			if diff := cmp.Diff(tt.wantInbox, got); diff != "" {
				t.Errorf("parent inbox (-want +got):\n%s", diff)
			}
			// Posted once: the key child:<pid> is taken.
			if tt.wantPosted {
				again := store.Message{Kind: conversation.KindProcessEvent, Content: "43", IdempotencyKey: "child:child"}
				if id, dup, err := e.s.Post(e.ctx, "parent", again); err != nil || !dup || id != msgs[0].ID {
					t.Errorf("repeat of the child's result = %q, %v, %v; want a duplicate of %s", id, dup, err, msgs[0].ID)
				}
			}
		})
	}
}

// TestCommitAfterPauseResumePause checks that a turn whose pause was
// resumed (the lifecycle gave the turn up) does not move the process when
// it is paused again.
func TestCommitAfterPauseResumePause(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	e.transition(t, "p1", lifecycle.Pause)
	e.transition(t, "p1", lifecycle.Resume)
	e.transition(t, "p1", lifecycle.Pause)
	r := e.commit(t, c, lifecycle.AwaitUser, chat("answer"))
	if want := (lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Ready}); r.Status != want {
		t.Errorf("after commit: %s, want %s", r.Status, want)
	}
}

func usage(in, out int) conversation.Event {
	e := conversation.NewModelUsage(conversation.ModelUsage{Provider: "p", InputTokens: in, OutputTokens: out})
	e.By = "model"
	return e
}

// TestCommitCountsTokens: each turn's commit adds what its model calls
// used (checkpointed usage included) to the record's totals and to those
// of the day, once, a turn recovered from a dead node included, and a turn
// paused meanwhile too; a turn of the next day counts that day's afresh.
func TestCommitCountsTokens(t *testing.T) {
	t.Parallel()
	e := setup(t)
	want := func(what string, rec store.Record, in, out int64) {
		t.Helper()
		if rec.Tokens.Input != in || rec.Tokens.Output != out {
			t.Errorf("%s: tokens %+v, want %d in, %d out", what, rec.Tokens, in, out)
		}
		// Every turn here is on t0's day, but the next day's.
		if day := t0.Truncate(24 * time.Hour); rec.Tokens.Day.Equal(day) && rec.Tokens.On(t0) != in+out {
			t.Errorf("%s: %d tokens on %s, want %d", what, rec.Tokens.On(t0), day.Format(time.DateOnly), in+out)
		}
		if got := e.get(t, rec.ID).Tokens; got != rec.Tokens {
			t.Errorf("%s: Get says tokens %+v, the commit %+v", what, got, rec.Tokens)
		}
	}
	in := user("first")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	if err := e.s.Checkpoint(e.ctx, c, []conversation.Event{usage(100, 10), chat("thinking")}); err != nil {
		t.Fatal(err)
	}
	want("a turn of two calls", e.commit(t, c, lifecycle.Continue, usage(50, 5), chat("done")), 150, 15)

	e.post(t, "p1", user("again"))
	want("a turn without usage", e.commit(t, e.claim(t, "p1", "t2"), lifecycle.Continue, chat("ok")), 150, 15)

	// A turn interrupted after a checkpointed call: its usage counts once,
	// when the turn that recovers it commits.
	e.post(t, "p1", user("third"))
	c = e.claim(t, "p1", "t3")
	if err := e.s.Checkpoint(e.ctx, c, []conversation.Event{usage(7, 3)}); err != nil {
		t.Fatal(err)
	}
	e.rdb.Del(e.ctx, e.key("p1", "lease")) // n1 died
	stale, err := e.s.ClaimStaleWakes(e.ctx, "n2", []string{engine}, 0, 10)
	if err != nil || len(stale) != 1 {
		t.Fatalf("ClaimStaleWakes = %+v, %v", stale, err)
	}
	r, err := e.s.Claim(e.ctx, stale[0], "n2", "t4")
	if err != nil || !r.Recovered {
		t.Fatalf("recovery claim = %+v, %v", r, err)
	}
	want("a recovered turn", e.commit(t, r, lifecycle.Continue, usage(2, 2)), 159, 20)

	// Paused during its turn: the process stays PAUSED, its tokens count.
	e.post(t, "p1", user("fourth"))
	c = e.claim(t, "p1", "t5")
	e.transition(t, "p1", lifecycle.Pause)
	rec := e.commit(t, c, lifecycle.AwaitUser, usage(1, 1))
	if rec.Status.State != lifecycle.Paused {
		t.Fatalf("state %s, want PAUSED", rec.Status)
	}
	want("a turn paused meanwhile", rec, 160, 21)

	// Stopped during its turn: the process stays DONE, its tokens count.
	e.transition(t, "p1", lifecycle.Resume)
	e.post(t, "p1", user("fifth"))
	c = e.claim(t, "p1", "t6")
	e.transition(t, "p1", lifecycle.Finish)
	if rec = e.commit(t, c, lifecycle.AwaitUser, usage(4, 4)); rec.Status.State != lifecycle.Done {
		t.Fatalf("state %s, want DONE", rec.Status)
	}
	want("a turn stopped meanwhile", rec, 164, 25)

	// The next day, its tokens count afresh.
	e.clock.advance(24 * time.Hour)
	in = user("tomorrow")
	e.create(t, "p2", &in)
	c = e.claim(t, "p2", "t7")
	if rec = e.commit(t, c, lifecycle.Continue, usage(30, 3)); rec.Tokens.On(t0) != 0 {
		t.Errorf("a turn of the first day: %d tokens on the day before", rec.Tokens.On(t0))
	}
	e.post(t, "p2", user("and again"))
	e.clock.advance(24 * time.Hour)
	next := e.clock.now()
	rec = e.commit(t, e.claim(t, "p2", "t8"), lifecycle.Continue, usage(5, 1))
	if rec.Tokens.Input != 35 || rec.Tokens.Output != 4 || rec.Tokens.On(next) != 6 || !rec.Tokens.Day.Equal(next.Truncate(24*time.Hour)) {
		t.Errorf("a turn of the next day: tokens %+v, want 35 in, 4 out, 6 on %s", rec.Tokens, next.Format(time.DateOnly))
	}
}
