package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// TestPostWakeRule posts messages to processes in every state and checks
// what the wake rule made of them.
func TestPostWakeRule(t *testing.T) {
	t.Parallel()
	type want struct {
		state  lifecycle.State
		queued bool
		wakes  int      // entries the posts added to the wake queue
		inbox  []string // pending messages
		log    []string // events after the process was set up
	}
	tests := []struct {
		name  string
		state lifecycle.State
		posts []store.Message
		want  want
	}{
		{"READY, user: queued once", lifecycle.Ready, []store.Message{user("a"), user("b")},
			want{lifecycle.Ready, true, 1, []string{"a", "b"}, []string{}}},
		{"READY, operator", lifecycle.Ready, []store.Message{msg(conversation.KindOperator, "operator:bob", "a")},
			want{lifecycle.Ready, true, 1, []string{"a"}, []string{}}},
		{"READY, process_event: queued once", lifecycle.Ready,
			[]store.Message{msg(conversation.KindProcessEvent, "p_w", "a"), msg(conversation.KindProcessEvent, "p_w", "b")},
			want{lifecycle.Ready, true, 1, []string{"a", "b"}, []string{}}},
		{"READY, schedule", lifecycle.Ready, []store.Message{msg(conversation.KindSchedule, "timer:d", "a")},
			want{lifecycle.Ready, true, 1, []string{"a"}, []string{}}},
		{"READY, system", lifecycle.Ready, []store.Message{msg(conversation.KindSystem, "", "a")},
			want{lifecycle.Ready, true, 1, []string{"a"}, []string{}}},
		{"BLOCKED, user: unblocked", lifecycle.Blocked, []store.Message{user("a"), user("b")},
			want{lifecycle.Ready, true, 1, []string{"a", "b"}, []string{"state BLOCKED->READY user_input by user:alice"}}},
		{"BLOCKED, operator: unblocked", lifecycle.Blocked, []store.Message{msg(conversation.KindOperator, "operator:bob", "a")},
			want{lifecycle.Ready, true, 1, []string{"a"}, []string{"state BLOCKED->READY user_input by operator:bob"}}},
		{"BLOCKED, operator without sender", lifecycle.Blocked, []store.Message{msg(conversation.KindOperator, "", "a")},
			want{lifecycle.Ready, true, 1, []string{"a"}, []string{"state BLOCKED->READY user_input by operator"}}},
		{"BLOCKED, process_event: waits", lifecycle.Blocked, []store.Message{msg(conversation.KindProcessEvent, "p_w", "a")},
			want{lifecycle.Blocked, false, 0, []string{"a"}, []string{}}},
		{"BLOCKED, schedule and system: wait", lifecycle.Blocked,
			[]store.Message{msg(conversation.KindSchedule, "timer:d", "a"), msg(conversation.KindSystem, "", "b")},
			want{lifecycle.Blocked, false, 0, []string{"a", "b"}, []string{}}},
		{"BLOCKED, process_event then user", lifecycle.Blocked,
			[]store.Message{msg(conversation.KindProcessEvent, "p_w", "a"), user("b")},
			want{lifecycle.Ready, true, 1, []string{"a", "b"}, []string{"state BLOCKED->READY user_input by user:alice"}}},
		{"RUNNING: stored, no wake", lifecycle.Running, []store.Message{user("a")},
			want{lifecycle.Running, false, 0, []string{"a"}, []string{}}},
		{"PAUSED: stored, no wake", lifecycle.Paused, []store.Message{user("a"), msg(conversation.KindProcessEvent, "p_w", "b")},
			want{lifecycle.Paused, false, 0, []string{"a", "b"}, []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			pid := e.processIn(t, "p1", tt.state)
			before, wakes := len(e.log(t, pid)), e.wakeEntries(t)
			for _, m := range tt.posts {
				e.post(t, pid, m)
			}
			r := e.get(t, pid)
			got := want{r.Status.State, r.Queued, e.wakeEntries(t) - wakes, e.inbox(t, pid), describe(e.log(t, pid)[before:])}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("after posting (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPostBlockedThenUserDrainsBoth checks that a message that could not
// wake a BLOCKED process is drained, in order, by the wake a user message
// causes.
func TestPostBlockedThenUserDrainsBoth(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.processIn(t, "p1", lifecycle.Blocked)
	e.post(t, pid, msg(conversation.KindProcessEvent, "p_w", "worker done"))
	e.post(t, pid, user("and now?"))
	c := e.claim(t, pid, "t1")
	want := []string{
		"state BLOCKED->READY user_input by user:alice",
	}
	if diff := cmp.Diff(want, describe(c.History)); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
	want = []string{
		"turn_start wake [t1]",
		"state READY->RUNNING wake by node:n1 [t1]",
		`inbox process_event p_w "worker done" [t1]`,
		`inbox user user:alice "and now?" [t1]`,
	}
	if diff := cmp.Diff(want, describe(c.Current)); diff != "" {
		t.Errorf("Current (-want +got):\n%s", diff)
	}
	if got := e.inbox(t, pid); len(got) != 0 {
		t.Errorf("inbox after the claim = %q, want empty", got)
	}
}

// TestPostPausedThenResume checks that messages posted to a paused process
// are judged when it is resumed.
func TestPostPausedThenResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		msgs      []store.Message
		wantState lifecycle.State
		wantWakes int
	}{
		{"user message wakes it", []store.Message{user("hello")}, lifecycle.Ready, 1},
		{"process_event does not", []store.Message{msg(conversation.KindProcessEvent, "p_w", "done")}, lifecycle.Blocked, 0},
		{"nothing", nil, lifecycle.Blocked, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			pid := e.processIn(t, "p1", lifecycle.Paused)
			for _, m := range tt.msgs {
				e.post(t, pid, m)
			}
			if n := e.wakeEntries(t); n != 0 {
				t.Fatalf("wakes while paused = %d, want 0", n)
			}
			r := e.transition(t, pid, lifecycle.Resume)
			if r.Status.State != tt.wantState || e.wakeEntries(t) != tt.wantWakes || r.Queued != (tt.wantWakes == 1) {
				t.Errorf("after resume: %s, queued %v, %d wakes; want %s, %d wakes", r.Status, r.Queued, e.wakeEntries(t), tt.wantState, tt.wantWakes)
			}
		})
	}
}

func TestPostRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		state lifecycle.State // "" = no process
		pid   string
		msg   store.Message
		want  error
	}{
		{"DONE", lifecycle.Done, "p1", user("a"), store.ErrClosed},
		{"FAILED", lifecycle.Failed, "p1", user("a"), store.ErrClosed},
		{"unknown process", "", "p1", user("a"), store.ErrNotFound},
		{"not a process id", "", "p{1}", user("a"), store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			if tt.state != "" {
				e.processIn(t, tt.pid, tt.state)
			}
			_, _, err := e.s.Post(e.ctx, tt.pid, tt.msg)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Post = %v, want %v", err, tt.want)
			}
			if tt.state != "" {
				if got := e.inbox(t, tt.pid); len(got) != 0 {
					t.Errorf("inbox = %q, want nothing stored", got)
				}
			}
			if n := e.wakeEntries(t); n != 0 {
				t.Errorf("wakes = %d, want 0", n)
			}
		})
	}
	t.Run("unknown kind", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.processIn(t, "p1", lifecycle.Blocked)
		if _, _, err := e.s.Post(e.ctx, "p1", store.Message{Kind: "shout", Content: "a"}); err == nil {
			t.Fatal("Post with kind shout succeeded")
		}
	})
}

func TestPostIdempotent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.processIn(t, "p1", lifecycle.Blocked)
	m := user("once")
	m.IdempotencyKey = "k1"
	first, dup, err := e.s.Post(e.ctx, pid, m)
	if err != nil || dup {
		t.Fatalf("first Post = %q, dup %v, %v", first, dup, err)
	}
	m.Content = "twice"
	again, dup, err := e.s.Post(e.ctx, pid, m)
	if err != nil || !dup || again != first {
		t.Fatalf("repeated Post = %q, dup %v, %v; want %q, dup", again, dup, err, first)
	}
	if diff := cmp.Diff([]string{"once"}, e.inbox(t, pid)); diff != "" {
		t.Errorf("inbox (-want +got):\n%s", diff)
	}
	if ttl, _ := e.rdb.PTTL(e.ctx, e.key("p1", "idem")).Result(); ttl <= 0 {
		t.Errorf("idempotency keys expire in %s, want a TTL", ttl)
	}
	// Another key is another message.
	m.IdempotencyKey = "k2"
	if _, dup, _ := e.s.Post(e.ctx, pid, m); dup {
		t.Error("Post with a new key reported a duplicate")
	}
}

func TestInboxMessage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.processIn(t, "p1", lifecycle.Blocked)
	m := msg(conversation.KindProcessEvent, "p_w", "result")
	m.At = t0.Add(time.Hour)
	id := e.post(t, pid, m)
	got, err := e.s.Inbox(e.ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Message{{ID: id, Kind: conversation.KindProcessEvent, From: "p_w", Content: "result", At: t0.Add(time.Hour)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Inbox (-want +got):\n%s", diff)
	}
	if _, err := e.s.Inbox(e.ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Inbox of an unknown process = %v, want ErrNotFound", err)
	}
}
