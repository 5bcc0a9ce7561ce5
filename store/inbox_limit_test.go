package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// limited returns a store on e's Redis whose inboxes hold limit messages.
func (e *env) limited(t *testing.T, limit int) *store.Store {
	t.Helper()
	s, err := store.New(e.rdb, store.Config{Clock: e.clock.now, InboxLimit: limit, Partitions: e.partitions})
	if err != nil {
		t.Fatalf("store.New: %v", err)
	}
	return s
}

// TestInboxLimit fills an inbox to its limit and posts each kind of
// message in each state that keeps messages.
func TestInboxLimit(t *testing.T) {
	t.Parallel()
	schedule := msg(conversation.KindSchedule, "timer:d", "tick")
	tests := []struct {
		name  string
		state lifecycle.State
		post  store.Message
		taken bool            // else refused with ErrInboxFull
		after lifecycle.State // the state after the post
	}{
		{"READY, user: refused", lifecycle.Ready, user("more"), false, lifecycle.Ready},
		{"READY, operator: refused", lifecycle.Ready, msg(conversation.KindOperator, "operator:bob", "more"), false, lifecycle.Ready},
		{"READY, schedule: refused", lifecycle.Ready, schedule, false, lifecycle.Ready},
		{"READY, a worker's result: taken", lifecycle.Ready, msg(conversation.KindProcessEvent, "w_1", "42"), true, lifecycle.Ready},
		{"READY, system: taken", lifecycle.Ready, msg(conversation.KindSystem, "", "note"), true, lifecycle.Ready},
		{"RUNNING, user: refused", lifecycle.Running, user("more"), false, lifecycle.Running},
		{"PAUSED, user: refused", lifecycle.Paused, user("more"), false, lifecycle.Paused},
		{"BLOCKED, schedule: refused", lifecycle.Blocked, schedule, false, lifecycle.Blocked},
		{"BLOCKED, a worker's result: taken", lifecycle.Blocked, msg(conversation.KindProcessEvent, "w_1", "42"), true, lifecycle.Blocked},
		{"BLOCKED, user: taken, wakes it", lifecycle.Blocked, user("hello"), true, lifecycle.Ready},
		{"BLOCKED, operator: taken, wakes it", lifecycle.Blocked, msg(conversation.KindOperator, "operator:bob", "go"), true, lifecycle.Ready},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			pid := e.processIn(t, "p1", tt.state)
			s := e.limited(t, 2)
			for len(e.inbox(t, pid)) < 2 { // ticks wait in any of these states
				if _, _, err := s.Post(e.ctx, pid, schedule); err != nil {
					t.Fatalf("filling the inbox: %v", err)
				}
			}
			_, _, err := s.Post(e.ctx, pid, tt.post)
			wantLen := 2
			if tt.taken {
				wantLen = 3
				if err != nil {
					t.Fatalf("Post = %v, want it taken beyond the limit", err)
				}
			} else {
				var full *store.InboxFullError
				if !errors.Is(err, store.ErrInboxFull) || !errors.As(err, &full) || full.PID != pid || full.Limit != 2 {
					t.Fatalf("Post = %v, want an InboxFullError for %s, limit 2", err, pid)
				}
			}
			if n := len(e.inbox(t, pid)); n != wantLen {
				t.Errorf("inbox holds %d messages, want %d", n, wantLen)
			}
			if got := e.get(t, pid).Status.State; got != tt.after {
				t.Errorf("state %s, want %s", got, tt.after)
			}
		})
	}
}

// TestInboxLimitKeepsOtherAnswers checks that a full inbox changes no
// other answer of Post: a repeated idempotency key still returns the first
// message, a closed process is still closed.
func TestInboxLimitKeepsOtherAnswers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.processIn(t, "p1", lifecycle.Paused)
	s := e.limited(t, 1)
	first := user("once")
	first.IdempotencyKey = "k1"
	id, _, err := s.Post(e.ctx, pid, first)
	if err != nil {
		t.Fatal(err)
	}
	if again, dup, err := s.Post(e.ctx, pid, first); err != nil || !dup || again != id {
		t.Errorf("repeated key on a full inbox = %q, %v, %v; want the first id %s", again, dup, err, id)
	}
	e.transition(t, pid, lifecycle.Finish)
	if _, _, err := s.Post(e.ctx, pid, user("late")); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Post to DONE with a full inbox = %v, want ErrClosed", err)
	}
}

// TestInboxLimitDefault checks the default limit, and that -1 sets none.
func TestInboxLimitDefault(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.processIn(t, "p1", lifecycle.Paused)
	for i := range store.DefaultInboxLimit {
		e.post(t, pid, user(fmt.Sprint(i)))
	}
	if _, _, err := e.s.Post(e.ctx, pid, user("one more")); !errors.Is(err, store.ErrInboxFull) {
		t.Errorf("Post beyond the default limit = %v, want ErrInboxFull", err)
	}
	if _, _, err := e.limited(t, -1).Post(e.ctx, pid, user("one more")); err != nil {
		t.Errorf("Post with no limit = %v", err)
	}
	if _, err := store.New(e.rdb, store.Config{InboxLimit: -2}); err == nil {
		t.Error("store.New took InboxLimit -2")
	}
}

// TestTimerIntoAFullInbox checks that a timer firing into a full inbox
// moves on (it does not fire again for that due time) and drops its tick.
func TestTimerIntoAFullInbox(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.processIn(t, "p1", lifecycle.Blocked)
	s := e.limited(t, 1)
	e.post(t, pid, msg(conversation.KindSchedule, "timer:other", "waiting"))
	due := t0.Add(time.Minute)
	next := due.Add(time.Hour)
	e.putTimer(t, store.Timer{ID: "hourly", PID: pid, Cron: "0 * * * *", Message: "tick", Due: due})
	timers, err := s.DueTimers(e.ctx, due, 10)
	if err != nil || len(timers) != 1 {
		t.Fatalf("DueTimers = %v, %v", timers, err)
	}
	fired, err := s.FireTimer(e.ctx, timers[0], next)
	var full *store.InboxFullError
	if !fired || !errors.As(err, &full) || full.PID != pid {
		t.Fatalf("FireTimer = %v, %v; want fired and an InboxFullError", fired, err)
	}
	if diff := cmp.Diff([]string{"waiting"}, e.inbox(t, pid)); diff != "" {
		t.Errorf("inbox (-want +got):\n%s", diff)
	}
	if again, err := s.FireTimer(e.ctx, timers[0], next); again || err != nil {
		t.Errorf("firing the same due time again = %v, %v; want not fired", again, err)
	}
	if due, err := s.DueTimers(e.ctx, next, 10); err != nil || len(due) != 1 || !due[0].Due.Equal(next) {
		t.Errorf("DueTimers at the next time = %v, %v; want the timer rearmed", due, err)
	}
}

// TestCommitNotifyIntoAFullInbox checks that a worker's result reaches a
// parent whose inbox is full.
func TestCommitNotifyIntoAFullInbox(t *testing.T) {
	t.Parallel()
	e := setupIn(t, 1) // its workers are named
	e.processIn(t, "parent", lifecycle.Blocked)
	s := e.limited(t, 1)
	e.post(t, "parent", msg(conversation.KindSchedule, "timer:d", "tick"))
	task := msg(conversation.KindProcessEvent, "parent", "compute")
	if _, err := e.s.Create(e.ctx, store.NewProcess{ID: "child", Recipe: "worker", Engine: engine, Parent: "parent", Depth: 1, Input: &task}); err != nil {
		t.Fatal(err)
	}
	c := e.claim(t, "child", "t1")
	if _, err := s.Commit(e.ctx, c, []conversation.Event{chat("42")}, lifecycle.Finish, "model", &store.Notify{PID: "parent", Message: store.Message{Content: "42"}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"tick", "42"}, e.inbox(t, "parent")); diff != "" {
		t.Errorf("parent inbox (-want +got):\n%s", diff)
	}
}
