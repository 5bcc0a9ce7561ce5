package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// legacyFixture holds the keys a brain of the layout before partitions
// (commit 8739881) left: written by that brain's store, as the Redis
// commands that make them again. p_blocked answered a turn and has a
// timer; p_ready has a message waiting and is queued; p_running's node
// stopped mid-turn (its lease ran out) after it started p_worker (queued);
// p_approval waits for an operator's decision; p_done is finished.
const legacyFixture = "testdata/legacy-layout.jsonl"

// legacyProcesses are the fixture's processes, in creation order.
var legacyProcesses = []string{"p_blocked", "p_ready", "p_running", "p_worker", "p_approval", "p_done"}

// TestMigrate moves a store of the layout before partitions into
// partitions: every process keeps its record, log, inbox, timers, workers
// and approvals, the indexes answer, the queued processes and the one whose
// turn was cut short are woken, and nothing of the old layout is left.
func TestMigrate(t *testing.T) {
	t.Parallel()
	e := setup(t)
	testutil.Replay(t, e.rdb, legacyFixture)
	logs := map[string]int{}
	for _, pid := range legacyProcesses {
		logs[pid] = int(e.rdb.XLen(e.ctx, "brain:{"+pid+"}:events").Val())
	}
	if err := e.s.CheckLayout(e.ctx); !errors.Is(err, store.ErrLayout) {
		t.Fatalf("CheckLayout before the migration: %v, want ErrLayout", err)
	}

	// A node that still beats, or a lease still held, stops it.
	e.rdb.ZAdd(e.ctx, "brain:nodes:chat", redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: "n1"})
	if _, err := e.s.Migrate(e.ctx, nil); !errors.Is(err, store.ErrNodesRunning) {
		t.Fatalf("Migrate while n1 beats: %v, want ErrNodesRunning", err)
	}
	e.rdb.Del(e.ctx, "brain:nodes:chat")
	e.rdb.Set(e.ctx, "brain:{p_running}:lease", "n1|1", time.Minute)
	if _, err := e.s.Migrate(e.ctx, nil); !errors.Is(err, store.ErrNodesRunning) {
		t.Fatalf("Migrate while a turn's lease is held: %v, want ErrNodesRunning", err)
	}
	e.rdb.Del(e.ctx, "brain:{p_running}:lease")

	// Stopped after two processes, it goes on where it stopped.
	ctx, cancel := context.WithCancel(e.ctx)
	moved := 0
	if _, err := e.s.Migrate(ctx, func(string) {
		if moved++; moved == 2 {
			cancel()
		}
	}); err == nil {
		t.Fatal("Migrate stopped midway: no error")
	}
	if err := e.s.CheckLayout(e.ctx); !errors.Is(err, store.ErrLayout) {
		t.Fatalf("CheckLayout midway: %v, want ErrLayout", err)
	}
	done, err := e.s.Migrate(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if done.Processes != len(legacyProcesses)-2 {
		t.Errorf("the second run moved %d processes, want the %d left", done.Processes, len(legacyProcesses)-2)
	}
	if err := e.s.CheckLayout(e.ctx); err != nil {
		t.Fatalf("CheckLayout after the migration: %v", err)
	}
	if again, err := e.s.Migrate(e.ctx, nil); err != nil || again != (store.Migrated{}) {
		t.Errorf("Migrate again = %+v, %v; want nothing to do", again, err)
	}
	if left := e.rdb.Keys(e.ctx, "brain:{p_*").Val(); len(left) != 0 {
		t.Errorf("keys of the old layout left: %v", left)
	}
	for _, pattern := range []string{"brain:state:*", "brain:owner:*", "brain:wake:*", "brain:timers", "brain:approvals"} {
		if left := e.rdb.Keys(e.ctx, pattern).Val(); len(left) != 0 {
			t.Errorf("old indexes left: %v", left)
		}
	}

	// Every process, as it was.
	recs, _, err := e.s.List(e.ctx, "", "", 100)
	if err != nil || !slices.Equal(ids(recs), legacyProcesses) {
		t.Fatalf("List = %v, %v; want %v", ids(recs), err, legacyProcesses)
	}
	states := map[string]lifecycle.State{"p_blocked": lifecycle.Blocked, "p_ready": lifecycle.Ready, "p_running": lifecycle.Running,
		"p_worker": lifecycle.Ready, "p_approval": lifecycle.Blocked, "p_done": lifecycle.Done}
	for _, r := range recs {
		if r.Status.State != states[r.ID] {
			t.Errorf("%s is %s, want %s", r.ID, r.Status.State, states[r.ID])
		}
		evs, err := e.s.Log(e.ctx, r.ID, "", 0)
		if err != nil || len(evs) != logs[r.ID] {
			t.Errorf("the log of %s: %d events, %v; want its %d", r.ID, len(evs), err, logs[r.ID])
		}
	}
	if in, err := e.s.Inbox(e.ctx, "p_ready"); err != nil || len(in) != 1 || in[0].Content != "are you there?" {
		t.Errorf("p_ready's inbox = %+v, %v; want its message", in, err)
	}
	if owned, _, err := e.s.ListOwned(e.ctx, "alice", "", "", 10); err != nil || !slices.Equal(ids(owned), []string{"p_blocked", "p_running", "p_worker"}) {
		t.Errorf("ListOwned(alice) = %v, %v", ids(owned), err)
	}
	if ws, _, err := e.s.ListWorkers(e.ctx, "p_running", "", "", 10); err != nil || !slices.Equal(ids(ws), []string{"p_worker"}) {
		t.Errorf("ListWorkers(p_running) = %v, %v", ids(ws), err)
	}
	if ap, err := e.s.Approvals(e.ctx); err != nil || len(ap) != 1 || ap[0].ID != "p_approval" {
		t.Errorf("Approvals = %v, %v; want p_approval", ap, err)
	}
	if _, _, err := e.s.Post(e.ctx, "p_approval", decision("call_1", conversation.Approve)); err != nil {
		t.Errorf("the decision on p_approval's call: %v", err)
	}
	timers, err := e.s.DueTimers(e.ctx, t0.Add(48*time.Hour), 10)
	if err != nil || len(timers) != 1 || timers[0].PID != "p_blocked" || timers[0].ID != "standup" {
		t.Errorf("DueTimers = %v, %v; want p_blocked's standup", timers, err)
	}

	// The queued processes are woken, and the cut turn is recovered.
	woken := map[string]store.Wake{}
	ws, err := e.s.ReadWakes(e.ctx, "n1", []string{"chat", "worker"}, 100, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		woken[w.PID] = w
	}
	for _, pid := range []string{"p_ready", "p_running", "p_worker", "p_approval"} {
		if _, ok := woken[pid]; !ok {
			t.Errorf("no wake of %s (woken: %v)", pid, woken)
		}
	}
	c, err := e.s.Claim(e.ctx, woken["p_running"], "n1", "t_new")
	if err != nil || !c.Recovered || c.TurnID != "t_2" {
		t.Fatalf("the claim of p_running = %+v, %v; want its turn t_2 recovered", c, err)
	}
}
