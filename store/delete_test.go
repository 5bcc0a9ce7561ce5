package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// TestDelete deletes a process with something in every key it has: nothing
// of it is left, in its keys or in the indexes, and the other process is
// untouched.
func TestDelete(t *testing.T) {
	t.Parallel()
	e := setup(t)
	keep := e.processIn(t, "p_keep", lifecycle.Blocked)
	pid := e.processIn(t, "p_gone", lifecycle.Ready) // a turn in its log
	m := user("once")
	m.IdempotencyKey = "k1"
	e.post(t, pid, m) // READY with a message: queued
	if err := e.s.PutTimer(e.ctx, store.Timer{ID: "t1", PID: pid, At: t0.Add(time.Hour), Message: "later", Due: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{keep, pid} {
		if err := e.s.PutTimer(e.ctx, store.Timer{ID: "t2", PID: id, At: t0.Add(time.Hour), Message: "later", Due: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}

	rec, err := e.s.Delete(e.ctx, pid)
	if err != nil || rec.ID != pid || rec.Status.State != lifecycle.Ready || rec.Owner != "alice" {
		t.Fatalf("Delete = %+v, %v; want the READY record of %s", rec, err, pid)
	}
	if keys, err := e.rdb.Keys(e.ctx, "brain:{"+pid+"}:*").Result(); err != nil || len(keys) != 0 {
		t.Errorf("keys of the deleted process: %v, %v; want none", keys, err)
	}
	if _, err := e.s.Get(e.ctx, pid); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	for _, list := range []func() ([]store.Record, string, error){
		func() ([]store.Record, string, error) { return e.s.List(e.ctx, "", "", 100) },
		func() ([]store.Record, string, error) { return e.s.ListOwned(e.ctx, "alice", "", "", 100) },
	} {
		recs, _, err := list()
		if err != nil || len(recs) != 1 || recs[0].ID != keep {
			t.Errorf("list after Delete: %d records, %v; want %s alone", len(recs), err, keep)
		}
	}
	due, err := e.s.DueTimers(e.ctx, t0.Add(2*time.Hour), 100)
	if err != nil || len(due) != 1 || due[0].PID != keep {
		t.Errorf("due timers after Delete: %+v, %v; want %s's alone", due, err, keep)
	}
	// The wake it had queued is settled by the claim that reads it.
	if _, err := e.s.Claim(e.ctx, e.wake(t, pid), "n1", "t9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Claim of the deleted process's wake: %v, want ErrNotFound", err)
	}
	if n := e.wakeEntries(t); n != 0 {
		t.Errorf("%d wake entries left, want 0", n)
	}
	if _, err := e.s.Delete(e.ctx, pid); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	if _, err := e.s.Delete(e.ctx, "no{such}"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete of an invalid id: %v, want ErrNotFound", err)
	}
	if got := e.get(t, keep); got.Status.State != lifecycle.Blocked {
		t.Errorf("the other process is %s, want BLOCKED", got.Status.State)
	}
}

// TestDeleteWhileRunning: a turn's lease holds a deletion off; a node whose
// lease expired finds the process gone and writes nothing.
func TestDeleteWhileRunning(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("start")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	if _, err := e.s.Delete(e.ctx, "p1"); !errors.Is(err, store.ErrRunning) {
		t.Fatalf("Delete during a turn: %v, want ErrRunning", err)
	}
	e.commit(t, c, lifecycle.AwaitUser)
	if _, err := e.s.Delete(e.ctx, "p1"); err != nil {
		t.Fatalf("Delete after the turn: %v", err)
	}

	e.create(t, "p2", &in)
	stalled := e.claim(t, "p2", "t2")
	if err := e.rdb.Del(e.ctx, "brain:{p2}:lease").Err(); err != nil { // the lease expires
		t.Fatal(err)
	}
	if _, err := e.s.Delete(e.ctx, "p2"); err != nil {
		t.Fatalf("Delete of a process whose node died: %v", err)
	}
	if err := e.s.Checkpoint(e.ctx, stalled, []conversation.Event{chat("late")}); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Checkpoint after Delete: %v, want ErrFenced", err)
	}
	if _, err := e.s.Commit(e.ctx, stalled, nil, lifecycle.AwaitUser, "model", nil); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Commit after Delete: %v, want ErrFenced", err)
	}
	if keys, err := e.rdb.Keys(e.ctx, "brain:{p2}:*").Result(); err != nil || len(keys) != 0 {
		t.Errorf("keys after the stalled node's writes: %v, %v; want none", keys, err)
	}
}

// TestWorkerOfADeletedParent: a worker's result to a parent that was
// deleted is dropped; the worker finishes and no parent is made again.
func TestWorkerOfADeletedParent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.create(t, "p_parent", nil)
	task := msg(conversation.KindUser, "process:p_parent", "count")
	if _, err := e.s.Create(e.ctx, store.NewProcess{ID: "p_worker", Recipe: "w", Engine: engine, Parent: "p_parent", Depth: 1, Input: &task}); err != nil {
		t.Fatal(err)
	}
	c := e.claim(t, "p_worker", "t1")
	if _, err := e.s.Delete(e.ctx, "p_parent"); err != nil {
		t.Fatal(err)
	}
	notify := &store.Notify{PID: "p_parent", Message: msg(conversation.KindProcessEvent, "p_worker", "3 rows")}
	rec, err := e.s.Commit(e.ctx, c, nil, lifecycle.Finish, "model", notify)
	if err != nil || rec.Status.State != lifecycle.Done {
		t.Fatalf("Commit = %s, %v; want DONE", rec.Status, err)
	}
	keys, err := e.rdb.Keys(e.ctx, "brain:{p_parent}:*").Result()
	if err != nil || len(keys) != 0 {
		t.Errorf("parent keys after the worker reported: %v, %v; want none", keys, err)
	}
}

// TestDeleteFinished deletes the DONE and FAILED processes that have not
// changed since the cutoff, and nothing else.
func TestDeleteFinished(t *testing.T) {
	t.Parallel()
	e := setup(t)
	oldDone := e.processIn(t, "p_old_done", lifecycle.Done)
	oldFailed := e.processIn(t, "p_old_failed", lifecycle.Failed)
	blocked := e.processIn(t, "p_blocked", lifecycle.Blocked)
	ready := e.processIn(t, "p_ready", lifecycle.Ready)
	lateDone := e.processIn(t, "p_late_done", lifecycle.Blocked)
	e.clock.advance(time.Hour)
	cutoff := e.clock.now()
	e.clock.advance(time.Hour)
	e.transition(t, lateDone, lifecycle.Finish) // finished after the cutoff
	newDone := e.processIn(t, "p_new_done", lifecycle.Done)

	n, err := e.s.DeleteFinished(e.ctx, cutoff)
	if err != nil || n != 2 {
		t.Fatalf("DeleteFinished = %d, %v; want 2", n, err)
	}
	for _, pid := range []string{oldDone, oldFailed} {
		if _, err := e.s.Get(e.ctx, pid); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s after DeleteFinished: %v, want ErrNotFound", pid, err)
		}
	}
	for _, pid := range []string{blocked, ready, lateDone, newDone} {
		if _, err := e.s.Get(e.ctx, pid); err != nil {
			t.Errorf("%s after DeleteFinished: %v, want it kept", pid, err)
		}
	}
	if n, err := e.s.DeleteFinished(e.ctx, cutoff); err != nil || n != 0 {
		t.Errorf("second DeleteFinished = %d, %v; want 0", n, err)
	}
}
