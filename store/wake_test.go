package store_test

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// TestReadWakesOnce checks that two nodes reading the queue at once get
// each wake exactly once.
func TestReadWakesOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		in := user("hi")
		e.create(t, id, &in)
	}
	var mu sync.Mutex
	got := map[string][]string{}
	var wg sync.WaitGroup
	for _, node := range []string{"n1", "n2"} {
		wg.Go(func() {
			ws, err := e.s.ReadWakes(e.ctx, node, []string{engine}, 100, 50*time.Millisecond)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, w := range ws {
				got[w.PID] = append(got[w.PID], node)
			}
		})
	}
	wg.Wait()
	if len(got) != 6 {
		t.Errorf("wakes read for %d processes, want 6: %v", len(got), got)
	}
	for pid, nodes := range got {
		if len(nodes) != 1 {
			t.Errorf("wake of %s read by %v, want one node", pid, nodes)
		}
	}
	if ws := e.wakes(t, "n3"); len(ws) != 0 {
		t.Errorf("a third reader got %v, want nothing left", ws)
	}
}

// TestReadWakesCount checks that count bounds the wakes a read takes in
// all (give or take one per stream), not per stream: a node takes about
// what it can run and leaves the rest for others.
func TestReadWakesCount(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s, err := store.New(e.rdb, store.Config{Clock: e.clock.now, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		in := user("hi")
		if _, err := s.Create(e.ctx, store.NewProcess{ID: fmt.Sprintf("p%d", i), Recipe: "r", Engine: engine, Input: &in}); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := s.ReadWakes(e.ctx, "n1", []string{engine}, 8, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Four partitions of ten wakes or so each.
	if len(ws) < 8 || len(ws) > 8+3 {
		t.Errorf("read %d wakes with count 8 over 4 streams, want 8 to 11", len(ws))
	}
}

// TestClaimStaleWakes checks that a wake read by a consumer that died is
// taken over, and that AckWake settles it.
func TestClaimStaleWakes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	w := e.wake(t, "p1") // n1 reads it, then dies
	if ws, err := e.s.ClaimStaleWakes(e.ctx, "n2", []string{engine}, time.Hour, 10); err != nil || len(ws) != 0 {
		t.Fatalf("ClaimStaleWakes(min idle 1h) = %v, %v; want nothing", ws, err)
	}
	ws, err := e.s.ClaimStaleWakes(e.ctx, "n2", []string{engine}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Wake{w}, ws); diff != "" {
		t.Fatalf("ClaimStaleWakes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"n2": 1}, e.pendingWakes(t)); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if err := e.s.AckWake(e.ctx, w); err != nil {
		t.Fatal(err)
	}
	if p, n := e.pendingWakes(t), e.wakeEntries(t); len(p) != 0 || n != 0 {
		t.Errorf("after AckWake: pending %v, %d entries; want none", p, n)
	}
}

func TestReadWakesArguments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tests := []struct {
		name    string
		node    string
		engines []string
		block   time.Duration
	}{
		{"block 0 would block forever", "n1", []string{engine}, 0},
		{"negative block", "n1", []string{engine}, -time.Second},
		{"no engines", "n1", nil, time.Millisecond},
		{"bad engine name", "n1", []string{"chat:0"}, time.Millisecond},
		{"no node", "", []string{engine}, time.Millisecond},
	}
	for _, tt := range tests {
		if _, err := e.s.ReadWakes(e.ctx, tt.node, tt.engines, 10, tt.block); err == nil {
			t.Errorf("%s: ReadWakes succeeded", tt.name)
		}
	}
}

// TestReadWakesAfterFlush checks that consumer groups lost by Redis are
// created again.
func TestReadWakesAfterFlush(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if ws := e.wakes(t, "n1"); len(ws) != 0 {
		t.Fatalf("wakes = %v", ws)
	}
	e.rdb.FlushAll(e.ctx)
	in := user("hi")
	e.create(t, "p1", &in)
	e.wake(t, "p1")
}

// TestWakePartitions checks that processes spread over the partitions'
// wake streams and every stream is read.
func TestWakePartitions(t *testing.T) {
	t.Parallel()
	e := setup(t)
	want := map[string]bool{}
	for i := range 40 {
		in := user("hi")
		pid := "p" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		e.create(t, pid, &in)
		want[store.WakeStream(store.DefaultPartitions, store.Partition(store.DefaultPartitions, pid), engine)] = true
	}
	streams := map[string]bool{}
	for _, w := range e.wakes(t, "n1") {
		streams[w.Stream] = true
	}
	if len(want) < 20 || !maps.Equal(streams, want) {
		t.Errorf("wakes came from %d streams, want the %d of the processes' partitions", len(streams), len(want))
	}
}

// TestTrimWakes checks that trimming a wake stream removes the entries
// every node is done with and keeps those a node may still need: a dead
// node's pending wake (which another then takes over) and the wakes nobody
// has read.
func TestTrimWakes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s, err := store.New(e.rdb, store.Config{Clock: e.clock.now, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	trim := func() {
		t.Helper()
		if err := s.TrimWakes(e.ctx, []string{engine}); err != nil {
			t.Fatalf("TrimWakes: %v", err)
		}
	}
	entries := func() []string {
		t.Helper()
		msgs, err := e.rdb.XRange(e.ctx, store.WakeStream(1, 0, engine), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		var pids []string
		for _, m := range msgs {
			pids = append(pids, m.Values["pid"].(string))
		}
		return pids
	}
	turn := func(w store.Wake, node string, commit bool) *store.Claim {
		t.Helper()
		c, err := s.Claim(e.ctx, w, node, "t_"+w.PID)
		if err != nil {
			t.Fatalf("Claim(%s): %v", w.PID, err)
		}
		if commit {
			if _, err := s.Commit(e.ctx, c, []conversation.Event{chat("done")}, lifecycle.AwaitUser, "model", nil); err != nil {
				t.Fatalf("Commit(%s): %v", w.PID, err)
			}
		}
		return c
	}
	trim() // no stream yet: nothing to do
	for _, pid := range []string{"p1", "p2", "p3"} {
		in := user("hi")
		if _, err := s.Create(e.ctx, store.NewProcess{ID: pid, Recipe: "assistant", Engine: engine, Input: &in}); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := s.ReadWakes(e.ctx, "n1", []string{engine}, 10, time.Millisecond)
	if err != nil || len(ws) != 3 {
		t.Fatalf("ReadWakes = %+v, %v; want the three wakes", ws, err)
	}
	turn(ws[0], "n1", true)
	stalled := turn(ws[1], "n1", false) // its node stops here: the wake stays pending
	turn(ws[2], "n1", true)
	in := user("hi")
	if _, err := s.Create(e.ctx, store.NewProcess{ID: "p4", Recipe: "assistant", Engine: engine, Input: &in}); err != nil {
		t.Fatal(err)
	}
	trim()
	if got, want := entries(), []string{"p2", "p3", "p4"}; !slices.Equal(got, want) {
		t.Errorf("after the first trim the stream holds wakes of %v, want %v", got, want)
	}

	stale, err := s.ClaimStaleWakes(e.ctx, "n2", []string{engine}, 0, 10)
	if err != nil || len(stale) != 1 || stale[0].PID != "p2" {
		t.Fatalf("ClaimStaleWakes = %+v, %v; want p2's pending wake, trimmed or not", stale, err)
	}
	if _, err := s.Commit(e.ctx, stalled, []conversation.Event{chat("done")}, lifecycle.AwaitUser, "model", nil); err != nil {
		t.Fatal(err)
	}
	ws, err = s.ReadWakes(e.ctx, "n1", []string{engine}, 10, time.Millisecond)
	if err != nil || len(ws) != 1 || ws[0].PID != "p4" {
		t.Fatalf("ReadWakes = %+v, %v; want p4's wake", ws, err)
	}
	turn(ws[0], "n1", true)
	trim()
	trim()
	if got := entries(); len(got) != 0 {
		t.Errorf("after the last trim the stream holds wakes of %v, want none", got)
	}
	if n := e.wakeEntries(t); n != 0 {
		t.Errorf("%d wakes unsettled, want none", n)
	}
}

// TestNoBellKeysOnOneRedis checks that a wake queued on one Redis, whose
// nodes block on the wake streams, touches no bell key (they are for a
// Cluster's bell).
func TestNoBellKeysOnOneRedis(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	if w := e.wake(t, "p1"); w.PID != "p1" {
		t.Fatalf("wake = %+v", w)
	}
	if keys, err := e.rdb.Keys(e.ctx, "brain:bell:*").Result(); err != nil || len(keys) != 0 {
		t.Errorf("bell keys on one Redis: %v, %v; want none", keys, err)
	}
}
