package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/store"
)

// TestBeat checks the wake membership: a node counts for the engines it
// beats for until its ttl runs out or it leaves.
func TestBeat(t *testing.T) {
	t.Parallel()
	e := setup(t)
	beat := func(node string, engines []string, ttl time.Duration) store.Members {
		t.Helper()
		m, err := e.s.Beat(e.ctx, node, engines, ttl)
		if err != nil {
			t.Fatalf("Beat(%s): %v", node, err)
		}
		return m
	}
	beat("a", []string{"chat", "worker"}, time.Minute)
	beat("gone", []string{"chat"}, time.Millisecond)
	// The time of gone's beat runs out: the next beat drops it. (Its score
	// is a past unix ms once the wall clock moves past it.)
	deadline := time.Now().Add(10 * time.Second)
	var m store.Members
	for m = beat("b", []string{"chat"}, time.Minute); slices.Contains(m["chat"], "gone"); m = beat("b", []string{"chat"}, time.Minute) {
		if time.Now().After(deadline) {
			t.Fatalf("a node whose beat ran out is still a member: %v", m)
		}
	}
	if diff := cmp.Diff(store.Members{"chat": {"a", "b"}}, m); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if m := beat("c", []string{"worker"}, time.Minute); !slices.Equal(m["worker"], []string{"a", "c"}) {
		t.Errorf("worker members = %v, want a and c", m["worker"])
	}
	if err := e.s.Leave(e.ctx, "a", []string{"chat", "worker"}); err != nil {
		t.Fatal(err)
	}
	if m := beat("b", []string{"chat", "worker"}, time.Minute); !slices.Equal(m["chat"], []string{"b"}) || !slices.Equal(m["worker"], []string{"b", "c"}) {
		t.Errorf("after a left: %v, want chat [b], worker [b c]", m)
	}
	for _, bad := range []struct {
		node    string
		engines []string
		ttl     time.Duration
	}{{"", []string{"chat"}, time.Second}, {"a", nil, time.Second}, {"a", []string{"chat"}, 0}} {
		if _, err := e.s.Beat(e.ctx, bad.node, bad.engines, bad.ttl); err == nil {
			t.Errorf("Beat(%q, %v, %s) succeeded", bad.node, bad.engines, bad.ttl)
		}
	}
}

// TestHomeStreams checks that the members of an engine share its wake
// streams evenly, each stream home to exactly one of them, that they agree
// whatever order they list each other in, and that a node joining takes
// its share mostly from the others without moving streams between them.
func TestHomeStreams(t *testing.T) {
	t.Parallel()
	rdb := setup(t).rdb
	engines := []string{"chat", "worker"}
	// homes returns the home of each stream when members run engines with
	// partitions streams each, as each member computes it.
	homes := func(partitions int, members []string) map[string]string {
		t.Helper()
		s, err := store.New(rdb, store.Config{Partitions: partitions})
		if err != nil {
			t.Fatal(err)
		}
		streams := partitions * len(engines)
		home := map[string]string{}
		for i, node := range members {
			// Each node sees the others in its own order, without itself.
			others := slices.Concat(members[i+1:], members[:i])
			slices.Reverse(others)
			mine, away, err := s.HomeStreams(node, engines, store.Members{"chat": others, "worker": others})
			if err != nil {
				t.Fatal(err)
			}
			if len(mine)+len(away) != streams {
				t.Fatalf("%s: %d home and %d away streams, want %d in all", node, len(mine), len(away), streams)
			}
			// Each engine's share: its streams over its members, or one more.
			for _, e := range engines {
				n := 0
				for _, st := range mine {
					if strings.HasSuffix(st, ":wake:"+e) {
						n++
					}
				}
				if low := partitions / len(members); n < low || n > low+1 {
					t.Errorf("%d nodes, %d %s streams: %s is home to %d, want %d or %d", len(members), partitions, e, node, n, low, low+1)
				}
			}
			for _, st := range mine {
				if other, ok := home[st]; ok {
					t.Fatalf("%s is home to both %s and %s", st, other, node)
				}
				home[st] = node
			}
		}
		if len(home) != streams {
			t.Fatalf("%d of %d streams have a home", len(home), streams)
		}
		return home
	}
	for _, partitions := range []int{1, 4, 8, 64} {
		for n := 1; n <= 5; n++ {
			homes(partitions, []string{"n1", "n2", "n3", "n4", "n5"}[:n])
		}
	}
	two := homes(64, []string{"n1", "n2"})
	three := homes(64, []string{"n1", "n2", "n3"})
	moved := 0
	for st, node := range three {
		if node != "n3" && two[st] != node {
			moved++
		}
	}
	if moved > 16 {
		t.Errorf("%d of 128 streams moved between n1 and n2 when n3 joined, want at most 16", moved)
	}
	s, err := store.New(rdb, store.Config{Partitions: 64})
	if err != nil {
		t.Fatal(err)
	}
	if mine, away, err := s.HomeStreams("alone", engines, nil); err != nil || len(mine) != 128 || len(away) != 0 {
		t.Errorf("a node that knows no other: %d home, %d away, %v; want every stream home", len(mine), len(away), err)
	}
}

// TestReadWakesFrom checks that a read of some streams takes only their
// wakes.
func TestReadWakesFrom(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for i := range 20 {
		in := user("hi")
		e.create(t, fmt.Sprint("p", i), &in)
	}
	mine, away, err := e.s.HomeStreams("n1", []string{engine}, store.Members{engine: {"n2"}})
	if err != nil || len(mine) == 0 || len(away) == 0 {
		t.Fatalf("HomeStreams = %v, %v, %v; want streams on both sides", mine, away, err)
	}
	got := map[string]bool{}
	for _, streams := range [][]string{mine, away} {
		ws, err := e.s.ReadWakesFrom(e.ctx, "n1", streams, 100, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if !slices.Contains(streams, w.Stream) {
				t.Errorf("wake of %s from %s, which was not read", w.PID, w.Stream)
			}
			got[w.PID] = true
		}
	}
	if len(got) != 20 {
		t.Errorf("wakes of %d processes read, want 20", len(got))
	}
	for _, bad := range [][]string{nil, {store.Key(store.DefaultPartitions, "p1", "inbox")}} {
		if _, err := e.s.ReadWakesFrom(e.ctx, "n1", bad, 1, time.Millisecond); err == nil {
			t.Errorf("ReadWakesFrom(%q) succeeded", bad)
		}
		if _, err := e.s.StealWakes(e.ctx, "n1", bad, time.Second, 1); err == nil {
			t.Errorf("StealWakes(%q) succeeded", bad)
		}
	}
	if _, err := e.s.ReadWakesFrom(e.ctx, "n1", mine, 1, 0); err == nil {
		t.Error("ReadWakesFrom without a block succeeded")
	}
}

// TestStealWakes checks that a node takes from streams it is not home to
// only the wakes that waited there undelivered for the age given, as
// Redis's clock tells from their ids, and never a delivered one.
func TestStealWakes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	stream := store.WakeStream(store.DefaultPartitions, 0, "chat")
	// Undelivered: one from long ago (its id says so) and one of now.
	if err := e.rdb.XGroupCreateMkStream(e.ctx, stream, "nodes", "0").Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1000-0", "2000-0", "*"} {
		if err := e.rdb.XAdd(e.ctx, &redis.XAddArgs{Stream: stream, ID: id, Values: []any{"pid", "p" + id[:1]}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The home node read the first.
	if ws, err := e.s.ReadWakesFrom(e.ctx, "home", []string{stream}, 1, time.Millisecond); err != nil || len(ws) != 1 || ws[0].PID != "p1" {
		t.Fatalf("the home node's read = %v, %v; want p1's wake", ws, err)
	}
	ws, err := e.s.StealWakes(e.ctx, "other", []string{stream, store.WakeStream(store.DefaultPartitions, 1, "chat")}, time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []store.Wake{{Stream: stream, EntryID: "2000-0", PID: "p2"}}; !cmp.Equal(ws, want) {
		t.Errorf("StealWakes = %v, want only the old undelivered one %v", ws, want)
	}
	if ws, err := e.s.StealWakes(e.ctx, "other", []string{stream}, time.Minute, 10); err != nil || len(ws) != 0 {
		t.Errorf("again = %v, %v; want nothing: the young one stays for its home", ws, err)
	}
	if ws, err := e.s.StealWakes(e.ctx, "other", []string{stream}, 0, 10); err != nil || len(ws) != 1 || ws[0].PID != "p*" {
		t.Errorf("with no age = %v, %v; want the young one", ws, err)
	}
}

// TestStealWakesCount checks that count bounds the wakes a steal takes in
// all, not per stream: a node takes about what it has room for.
func TestStealWakesCount(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for i := range 20 {
		in := user("hi")
		e.create(t, fmt.Sprint("p", i), &in)
	}
	var streams []string
	for n := range store.DefaultPartitions {
		streams = append(streams, store.WakeStream(store.DefaultPartitions, n, "chat"))
	}
	taken := map[string]bool{}
	for _, count := range []int{3, 100} {
		ws, err := e.s.StealWakes(e.ctx, "other", streams, 0, count)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(count, 20-len(taken)); len(ws) != want {
			t.Errorf("StealWakes(count %d) took %d wakes, want %d", count, len(ws), want)
		}
		for _, w := range ws {
			taken[w.PID] = true
		}
	}
	if len(taken) != 20 {
		t.Errorf("%d processes' wakes taken, want all 20", len(taken))
	}
}
