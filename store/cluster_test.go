package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// TestOnCluster walks the store's API on a Redis Cluster of three masters,
// where every command and script must keep to one slot: processes spread
// over the partitions and so over the masters; a worker and its parent
// (the worker's result, the workers index, deleting the tree); wakes read,
// stolen, taken over and trimmed; timers; listing, counting and the owner
// limit across partitions; the function library on every master.
func TestOnCluster(t *testing.T) {
	t.Parallel()
	_, rdb := testutil.RedisCluster(t, 3, 0)
	c := &clock{t: t0}
	s, err := store.New(rdb, store.Config{Clock: c.now, OwnerLimit: 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	e := &env{ctx: t.Context(), rdb: rdb, s: s, clock: c}
	if err := s.CheckLayout(e.ctx); err != nil {
		t.Fatal(err)
	}

	// Twenty processes: their partitions fall on every master.
	var pids []string
	for i := range 20 {
		in := user(fmt.Sprint("hello ", i))
		pids = append(pids, e.create(t, fmt.Sprintf("p%02d", i), &in).ID)
	}
	masters := map[string]bool{}
	for _, pid := range pids {
		addr, err := rdb.MasterForKey(e.ctx, store.Key(store.DefaultPartitions, pid, "proc"))
		if err != nil {
			t.Fatal(err)
		}
		masters[addr.Options().Addr] = true
	}
	if len(masters) != 3 {
		t.Fatalf("the processes' keys are on %d masters, want 3", len(masters))
	}
	if _, err := s.Create(e.ctx, store.NewProcess{ID: "over", Recipe: "r", Engine: engine, Owner: "alice"}); err != nil {
		t.Fatal(err) // the 21st of 30
	}

	// Every wake is read, from every partition's stream, and claimed.
	got := map[string]*store.Claim{}
	for len(got) < len(pids) {
		ws := e.wakes(t, "n1")
		if len(ws) == 0 {
			t.Fatalf("%d of %d wakes read, then none", len(got), len(pids))
		}
		for _, w := range ws {
			cl, err := s.Claim(e.ctx, w, "n1", "t_"+w.PID)
			if err != nil {
				t.Fatalf("Claim(%s): %v", w.PID, err)
			}
			got[w.PID] = cl
		}
	}
	parent := got["p00"]
	if _, err := s.Steer(e.ctx, parent, []conversation.Event{conversation.NewChatMessage("working")}, conversation.KindOperator); err != nil {
		t.Fatal(err)
	}
	worker, err := s.Create(e.ctx, store.NewProcess{Recipe: "w", Engine: engine, Parent: "p00", Depth: 1, Owner: "alice",
		Input: &store.Message{Kind: conversation.KindSystem, From: "process:p00", Content: "a task"}})
	if err != nil {
		t.Fatal(err)
	}
	for pid, cl := range got {
		ev := lifecycle.AwaitUser
		if pid == "p00" {
			ev = lifecycle.Continue
		}
		e.commit(t, cl, ev, conversation.NewChatMessage("done"))
	}

	// The worker's turn reports to its parent, in the same partition.
	wc, err := s.Claim(e.ctx, e.wake(t, worker.ID), "n1", "t_w")
	if err != nil {
		t.Fatal(err)
	}
	report := store.ReportTo("p00", conversation.ProcessEvent{Child: worker.ID, Recipe: "w", Status: "done", Result: "42"})
	if _, err := s.Commit(e.ctx, wc, nil, lifecycle.Finish, "model", report); err != nil {
		t.Fatal(err)
	}
	if inbox := e.inbox(t, "p00"); len(inbox) != 1 {
		t.Errorf("the parent's inbox after its worker finished: %v, want its report", inbox)
	}
	if ws, _, err := s.ListWorkers(e.ctx, "p00", "", "", 10); err != nil || len(ws) != 1 || ws[0].ID != worker.ID {
		t.Errorf("ListWorkers(p00) = %v, %v; want %s", ids(ws), err, worker.ID)
	}

	// Lists and counts merge the partitions, in creation order.
	var listed []string
	for cursor := ""; ; {
		recs, next, err := s.List(e.ctx, "", cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, ids(recs)...)
		if cursor = next; cursor == "" {
			break
		}
	}
	want := append(slices.Clone(pids), "over", worker.ID)
	if !slices.Equal(listed, want) {
		t.Errorf("List by 7 = %v, want %v", listed, want)
	}
	counts, err := s.Counts(e.ctx)
	if err != nil || counts[lifecycle.Blocked] != 20 || counts[lifecycle.Done] != 1 || counts[lifecycle.Ready] != 1 {
		t.Errorf("Counts = %v, %v; want 20 BLOCKED, 1 READY (p00, with its report), 1 DONE", counts, err)
	}
	if recs, _, err := s.ListOwned(e.ctx, "alice", lifecycle.Blocked, "", 100); err != nil || len(recs) != 20 {
		t.Errorf("ListOwned(alice, BLOCKED) = %d records, %v; want 20", len(recs), err)
	}

	// A timer fires once, from its partition's index.
	due := c.now().Add(-time.Second)
	if err := s.PutTimer(e.ctx, store.Timer{ID: "tick", PID: "p05", Message: "tick", Due: due, At: due}); err != nil {
		t.Fatal(err)
	}
	timers, err := s.DueTimers(e.ctx, c.now(), 10)
	if err != nil || len(timers) != 1 || timers[0].PID != "p05" {
		t.Fatalf("DueTimers = %v, %v; want p05's", timers, err)
	}
	if fired, err := s.FireTimer(e.ctx, timers[0], time.Time{}); err != nil || !fired {
		t.Errorf("FireTimer = %v, %v", fired, err)
	}

	// Wakes left for another node are stolen, taken over and trimmed.
	home, away, err := s.HomeStreams("n2", []string{engine}, store.Members{engine: {"n3"}})
	if err != nil || len(home) == 0 || len(away) == 0 {
		t.Fatalf("HomeStreams = %d, %d, %v", len(home), len(away), err)
	}
	all := append(slices.Clone(home), away...)
	stolen, err := s.StealWakes(e.ctx, "n2", all, 0, 10)
	if err != nil || len(stolen) != 1 || stolen[0].PID != "p00" { // (a tick does not wake BLOCKED p05)
		t.Fatalf("StealWakes = %v, %v; want the wake of p00", stolen, err)
	}
	if taken, err := s.ClaimStaleWakes(e.ctx, "n3", []string{engine}, 0, 10); err != nil || len(taken) != 1 {
		t.Errorf("ClaimStaleWakes = %v, %v; want the wake n2 left", taken, err)
	}
	if err := s.TrimWakes(e.ctx, []string{engine}); err != nil {
		t.Fatal(err)
	}

	// Deleting the parent deletes its worker; nothing of either is left.
	if _, deleted, err := s.Delete(e.ctx, "p00"); err != nil || !slices.Equal(deleted, []string{worker.ID}) {
		t.Fatalf("Delete(p00) = %v, %v; want its worker deleted too", deleted, err)
	}
	for _, pid := range []string{"p00", worker.ID} {
		if _, err := s.Get(e.ctx, pid); err == nil {
			t.Errorf("%s after the delete: still there", pid)
		}
	}
	if _, err := s.TendLibraries(e.ctx); err != nil {
		t.Errorf("TendLibraries: %v", err)
	}
}

// TestWakesWithoutBell runs a store on a Cluster as a Redis user that may
// not use CLIENT: its wake bell cannot be set up, WakeBell says why, and
// wakes are found all the same, by polling.
func TestWakesWithoutBell(t *testing.T) {
	t.Parallel()
	cluster, _ := testutil.RedisCluster(t, 3, 0)
	rdb := testutil.ClusterUser(t, cluster, "+@all", "-client")
	ctx := t.Context()
	c := &clock{t: t0}
	s, err := store.New(rdb, store.Config{Clock: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	e := &env{ctx: ctx, rdb: rdb, s: s, clock: c, partitions: store.DefaultPartitions}
	if err := s.WakeBell(); err != nil {
		t.Errorf("WakeBell before any read = %v, want nil: none was tried", err)
	}
	in := user("hello")
	e.create(t, "p1", &in)
	if w := e.wake(t, "p1"); w.PID != "p1" {
		t.Fatalf("wake = %+v, want p1's", w)
	}
	if err := s.WakeBell(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("WakeBell = %v, want the bell down for want of permission (NOPERM)", err)
	}
}
