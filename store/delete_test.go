package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

	rec, workers, err := e.s.Delete(e.ctx, pid)
	if err != nil || rec.ID != pid || rec.Status.State != lifecycle.Ready || rec.Owner != "alice" || len(workers) != 0 {
		t.Fatalf("Delete = %+v, %v, %v; want the READY record of %s, no workers", rec, workers, err, pid)
	}
	if keys, err := e.rdb.Keys(e.ctx, "brain:*:"+pid).Result(); err != nil || len(keys) != 0 {
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
	if _, _, err := e.s.Delete(e.ctx, pid); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	if _, _, err := e.s.Delete(e.ctx, "no{such}"); !errors.Is(err, store.ErrNotFound) {
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
	if _, _, err := e.s.Delete(e.ctx, "p1"); !errors.Is(err, store.ErrRunning) {
		t.Fatalf("Delete during a turn: %v, want ErrRunning", err)
	}
	e.commit(t, c, lifecycle.AwaitUser)
	if _, _, err := e.s.Delete(e.ctx, "p1"); err != nil {
		t.Fatalf("Delete after the turn: %v", err)
	}

	e.create(t, "p2", &in)
	stalled := e.claim(t, "p2", "t2")
	if err := e.rdb.Del(e.ctx, e.key("p2", "lease")).Err(); err != nil { // the lease expires
		t.Fatal(err)
	}
	if _, _, err := e.s.Delete(e.ctx, "p2"); err != nil {
		t.Fatalf("Delete of a process whose node died: %v", err)
	}
	if err := e.s.Checkpoint(e.ctx, stalled, []conversation.Event{chat("late")}); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Checkpoint after Delete: %v, want ErrFenced", err)
	}
	if _, err := e.s.Commit(e.ctx, stalled, nil, lifecycle.AwaitUser, "model", nil); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Commit after Delete: %v, want ErrFenced", err)
	}
	if keys, err := e.rdb.Keys(e.ctx, "brain:*:p2").Result(); err != nil || len(keys) != 0 {
		t.Errorf("keys after the stalled node's writes: %v, %v; want none", keys, err)
	}
}

// worker creates process id, a worker of parent, BLOCKED.
func (e *env) worker(t testing.TB, id, parent string) {
	t.Helper()
	if _, err := e.s.Create(e.ctx, store.NewProcess{ID: id, Recipe: "w", Engine: engine, Parent: parent, Depth: 1}); err != nil {
		t.Fatal(err)
	}
}

// spawnAfterListing is a hook that starts worker w of parent once, right
// after the first pipeline that lists parent's workers: as a turn of the
// parent spawning it between Delete's reading of the workers and its
// deletion of the parent would.
type spawnAfterListing struct {
	e         *env
	t         *testing.T
	parent, w string
	done      atomic.Bool
}

func (h *spawnAfterListing) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *spawnAfterListing) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *spawnAfterListing) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if c.Name() == "zrange" && fmt.Sprint(c.Args()[1]) == h.e.key(h.parent, "workers") && h.done.CompareAndSwap(false, true) {
				h.e.worker(h.t, h.w, h.parent)
			}
		}
		return err
	}
}

// TestDeleteWithAWorkerStartedMeanwhile: a worker started after Delete
// read the process's workers makes the deletion of the process refuse
// (delete.lua), and Delete reads the workers again: the late worker is
// deleted too, never left without its parent.
func TestDeleteWithAWorkerStartedMeanwhile(t *testing.T) {
	t.Parallel()
	e := setupIn(t, 1) // its workers are named
	e.create(t, "p_parent", nil)
	e.worker(t, "w1", "p_parent")
	hook := &spawnAfterListing{e: e, t: t, parent: "p_parent", w: "w_late"}
	e.rdb.AddHook(hook)
	_, workers, err := e.s.Delete(e.ctx, "p_parent")
	if err != nil {
		t.Fatal(err)
	}
	if !hook.done.Load() {
		t.Fatal("the hook started no worker: the test no longer tests the race")
	}
	if want := []string{"w1", "w_late"}; !slices.Equal(workers, want) {
		t.Errorf("workers deleted: %v, want %v", workers, want)
	}
	for _, pid := range []string{"p_parent", "w1", "w_late"} {
		if keys := e.rdb.Keys(e.ctx, "brain:*:"+pid).Val(); len(keys) != 0 {
			t.Errorf("keys of %s: %v; want none", pid, keys)
		}
	}
}

// TestDeleteWorkers: a process goes with its workers, theirs first; a
// worker deleted alone leaves its parent's index.
func TestDeleteWorkers(t *testing.T) {
	t.Parallel()
	e := setupIn(t, 1) // its workers are named
	e.create(t, "p_parent", nil)
	e.worker(t, "w1", "p_parent")
	e.worker(t, "w2", "p_parent")
	e.worker(t, "w3", "w2")
	e.create(t, "p_other", nil)
	e.worker(t, "w4", "p_other")

	rec, workers, err := e.s.Delete(e.ctx, "p_parent")
	if err != nil || rec.ID != "p_parent" {
		t.Fatalf("Delete = %s, %v", rec.ID, err)
	}
	if want := []string{"w1", "w3", "w2"}; !slices.Equal(workers, want) {
		t.Errorf("workers deleted: %v, want %v (each one's own first)", workers, want)
	}
	for _, pid := range []string{"p_parent", "w1", "w2", "w3"} {
		if keys, err := e.rdb.Keys(e.ctx, "brain:*:"+pid).Result(); err != nil || len(keys) != 0 {
			t.Errorf("keys of %s: %v, %v; want none", pid, keys, err)
		}
	}
	if got := e.rdb.ZRange(e.ctx, e.key("p_other", "workers"), 0, -1).Val(); !slices.Equal(got, []string{"w4"}) {
		t.Errorf("the other process's workers: %v, want [w4]", got)
	}

	if _, workers, err := e.s.Delete(e.ctx, "w4"); err != nil || len(workers) != 0 {
		t.Fatalf("Delete of a worker alone: %v, %v", workers, err)
	}
	if n := e.rdb.Exists(e.ctx, e.key("p_other", "workers")).Val(); n != 0 {
		t.Error("a deleted worker is still in its parent's index")
	}

	// A worker in the index whose record is gone (deleted by hand in
	// Redis, say) does not hold its parent's deletion off.
	e.rdb.ZAdd(e.ctx, e.key("p_other", "workers"), redis.Z{Score: 1, Member: "p_ghost"})
	if _, workers, err := e.s.Delete(e.ctx, "p_other"); err != nil || len(workers) != 0 {
		t.Errorf("Delete with a gone worker indexed: %v, %v", workers, err)
	}
	if keys := e.rdb.Keys(e.ctx, "brain:*:p_other").Val(); len(keys) != 0 {
		t.Errorf("keys of p_other: %v, want none", keys)
	}
}

// TestDeleteWithARunningWorker: a running worker holds its parent's
// deletion off; the parent and its workers go once the turn has ended.
// A worker whose parent went anyway (a process from before workers were
// indexed) finishes, and its report is dropped.
func TestDeleteWithARunningWorker(t *testing.T) {
	t.Parallel()
	e := setupIn(t, 1) // its workers are named
	e.create(t, "p_parent", nil)
	e.worker(t, "w_done", "p_parent")
	e.worker(t, "w_busy", "p_parent")
	e.post(t, "w_busy", user("count"))
	c := e.claim(t, "w_busy", "t1")
	_, workers, err := e.s.Delete(e.ctx, "p_parent")
	var we *store.WorkerError
	if !errors.Is(err, store.ErrRunning) || !errors.As(err, &we) || we.Worker != "w_busy" {
		t.Fatalf("Delete while a worker runs: %v, want ErrRunning of the WorkerError w_busy", err)
	}
	if !slices.Equal(workers, []string{"w_done"}) {
		t.Errorf("workers deleted before the refusal: %v, want [w_done]", workers)
	}
	if got := e.get(t, "p_parent"); got.Status.State != lifecycle.Blocked {
		t.Errorf("the parent is %s after the refusal, want it kept BLOCKED", got.Status.State)
	}
	e.commit(t, c, lifecycle.Continue)
	if _, workers, err := e.s.Delete(e.ctx, "p_parent"); err != nil || !slices.Equal(workers, []string{"w_busy"}) {
		t.Fatalf("Delete after the worker's turn: %v, %v; want w_busy deleted", workers, err)
	}

	// Deeper down, the running worker itself is named.
	e.create(t, "p_top", nil)
	e.worker(t, "w_mid", "p_top")
	e.worker(t, "w_deep", "w_mid")
	e.post(t, "w_deep", user("count"))
	c = e.claim(t, "w_deep", "t3")
	if _, _, err := e.s.Delete(e.ctx, "p_top"); !errors.As(err, &we) || we.Worker != "w_deep" {
		t.Errorf("Delete while a worker's worker runs: %v, want the WorkerError of w_deep", err)
	}
	e.commit(t, c, lifecycle.Continue)

	e.create(t, "p_legacy", nil)
	e.worker(t, "w_legacy", "p_legacy")
	e.post(t, "w_legacy", user("count"))
	c = e.claim(t, "w_legacy", "t2")
	e.rdb.Del(e.ctx, e.key("p_legacy", "workers")) // as created before the index
	if _, _, err := e.s.Delete(e.ctx, "p_legacy"); err != nil {
		t.Fatal(err)
	}
	notify := &store.Notify{PID: "p_legacy", Message: msg(conversation.KindProcessEvent, "w_legacy", "3 rows")}
	rec, err := e.s.Commit(e.ctx, c, nil, lifecycle.Finish, "model", notify)
	if err != nil || rec.Status.State != lifecycle.Done {
		t.Fatalf("Commit = %s, %v; want DONE", rec.Status, err)
	}
	if keys := e.rdb.Keys(e.ctx, "brain:*:p_legacy").Val(); len(keys) != 0 {
		t.Errorf("parent keys after the worker reported: %v; want none", keys)
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

// TestDeleteFinishedKeepsAParentWithWorkers: retention deletes a finished
// process only once it has no workers left; its finished workers go first.
func TestDeleteFinishedKeepsAParentWithWorkers(t *testing.T) {
	t.Parallel()
	e := setupIn(t, 1) // its workers are named
	parent := e.processIn(t, "p_parent", lifecycle.Done)
	e.worker(t, "w_done", parent)
	e.transition(t, "w_done", lifecycle.Finish)
	e.worker(t, "w_blocked", parent)
	e.clock.advance(time.Hour)

	// The parent, first in the walk, still has its workers; w_done goes.
	if n, err := e.s.DeleteFinished(e.ctx, e.clock.now()); err != nil || n != 1 {
		t.Fatalf("DeleteFinished = %d, %v; want 1 (w_done)", n, err)
	}
	if _, err := e.s.Get(e.ctx, parent); err != nil {
		t.Fatalf("the parent, whose worker w_blocked lives: %v, want it kept", err)
	}
	if _, _, err := e.s.Delete(e.ctx, "w_blocked"); err != nil {
		t.Fatal(err)
	}
	if n, err := e.s.DeleteFinished(e.ctx, e.clock.now()); err != nil || n != 1 {
		t.Fatalf("DeleteFinished once its workers are gone = %d, %v; want 1", n, err)
	}
	if _, err := e.s.Get(e.ctx, parent); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the parent after its workers: %v, want ErrNotFound", err)
	}
}

// A worker deleted before it finished tells its parent, which may be
// waiting for its report; a finished one has reported already, and the
// workers of a process being deleted have nobody to tell.
func TestDeleteTellsTheParent(t *testing.T) {
	t.Parallel()
	e := setupIn(t, 1) // its workers are named
	e.create(t, "p_parent", nil)
	e.worker(t, "p_busy", "p_parent")
	e.worker(t, "p_done", "p_parent")
	e.transition(t, "p_done", lifecycle.Finish)
	for _, w := range []string{"p_busy", "p_done"} {
		if _, _, err := e.s.Delete(e.ctx, w); err != nil {
			t.Fatalf("Delete(%s): %v", w, err)
		}
	}
	msgs, err := e.s.Inbox(e.ctx, "p_parent")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Kind != conversation.KindProcessEvent || msgs[0].From != "process:p_busy" {
		t.Fatalf("the parent's inbox holds %+v, want the unfinished worker's report alone", msgs)
	}
	report, ok := (&conversation.InboxMessage{Kind: msgs[0].Kind, Content: msgs[0].Content}).ProcessEvent()
	if !ok || report.Child != "p_busy" || report.Recipe != "w" || report.Status != conversation.ReportDeleted {
		t.Errorf("report %+v (%v), want p_busy of recipe w, deleted", report, ok)
	}

	e.worker(t, "p_orphan", "p_parent")
	posted := func() string { // XADDs so far: a report is one
		t.Helper()
		info, err := e.rdb.Info(e.ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(info, "cmdstat_xadd:")
		calls, _, _ := strings.Cut(rest, ",")
		return calls
	}
	before := posted()
	if _, deleted, err := e.s.Delete(e.ctx, "p_parent"); err != nil || !slices.Equal(deleted, []string{"p_orphan"}) {
		t.Fatalf("Delete(p_parent) = %v, %v; want its worker deleted with it", deleted, err)
	}
	if after := posted(); after != before {
		t.Errorf("deleting the parent and its worker added stream entries (%s, then %s): the worker told its parent", before, after)
	}
}
