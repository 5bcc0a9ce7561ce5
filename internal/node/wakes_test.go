package node

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

const answering = `
turns:
  - rounds:
      - calls: [{name: respond, args: {message: "Noted.", awaiting_user_input: true}}]
`

// TestWakesFindTheNodeThatKeepsTheLog checks wake affinity: with two nodes,
// a process's turns keep running on one of them, which finds its log kept,
// and a node that stops leaves the readers at once.
func TestWakesFindTheNodeThatKeepsTheLog(t *testing.T) {
	t.Parallel()
	const processes, turns = 10, 5
	redisSrv := testutil.StartRedis(t)
	m := NewMetrics(prometheus.NewRegistry())
	c := nodetest.NewCommits()
	nodes := map[string]*Node{}
	for _, id := range []string{"a", "b"} {
		nodes[id] = startNode(t, Config{Redis: redisSrv.Client(t), NodeID: id, Partitions: 16, LeaseTTL: 3 * time.Second,
			Models: map[string]llm.Model{"default": nodetest.Script(t, answering)}, Metrics: m, OnCommit: c.Add})
	}
	a, b := nodes["a"], nodes["b"]
	// a knew no other node when it started: it learns of b at its next beat.
	knowEachOther := func() bool {
		sa, sb := a.wakes.streams.Load(), b.wakes.streams.Load()
		return len(sa.home)+len(sb.home) == len(sa.home)+len(sa.away) && len(sa.home) > 0 && len(sb.home) > 0
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(nodetest.WaitTimeout)
	for !knowEachOther() {
		select {
		case <-tick.C: // a's next beat comes within a second
		case <-deadline:
			t.Fatal("the nodes never shared the wake streams between them")
		}
	}

	ctx := context.Background()
	pids := make([]string, processes)
	for i := range pids {
		rec, err := a.Create(ctx, NewProcess{Recipe: "default", Input: "message 0"})
		if err != nil {
			t.Fatal(err)
		}
		pids[i] = rec.ID
	}
	answered := func(pid string, k int) func(store.Record) bool {
		return func(store.Record) bool {
			return len(slices.DeleteFunc(c.Records(), func(r store.Record) bool { return r.ID != pid })) >= k
		}
	}
	for k := 1; k <= turns; k++ {
		for _, pid := range pids {
			c.Wait(t, fmt.Sprintf("%s's answer %d", pid, k), answered(pid, k))
			if k < turns {
				if _, err := a.Send(ctx, pid, "user:ada", fmt.Sprint("message ", k), ""); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// Without affinity, each turn runs on either node: about half the later
	// turns would move. A wake a node read with its view from before the
	// other's beat may move one.
	moves, later := 0, processes*(turns-1)
	for _, pid := range pids {
		var by []string
		for _, e := range mustLog(t, a, pid) {
			if e.TurnStart != nil {
				by = append(by, e.By)
			}
		}
		if len(by) != turns {
			t.Fatalf("%s: %d turns started, want %d", pid, len(by), turns)
		}
		for k := 1; k < turns; k++ {
			if by[k] != by[k-1] {
				moves++
			}
		}
	}
	if moves > later/10 {
		t.Errorf("%d of %d later turns ran on another node than the turn before, want nearly none", moves, later)
	}
	kept := promtest.ToFloat64(m.histories.WithLabelValues("kept"))
	if readBack := promtest.ToFloat64(m.histories.WithLabelValues("read_back")); kept+readBack != processes*turns || kept < float64(later-moves) {
		t.Errorf("%v turns found their log kept and %v read it back; want %d in all, at least the %d that did not move kept",
			kept, readBack, processes*turns, later-moves)
	}

	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	members, err := a.Store().Beat(ctx, "probe", []string{"chat"}, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(members["chat"], "b") {
		t.Errorf("a stopped node still reads wakes: %v", members)
	}
}

// TestWakesOfAnAbsentHomeAreTaken checks that a wake whose stream is home
// to a node that reads nothing (stuck, or gone without leaving and not yet
// timed out) is taken by another node.
func TestWakesOfAnAbsentHomeAreTaken(t *testing.T) {
	t.Parallel()
	redisSrv := testutil.StartRedis(t)
	rdb := redisSrv.Client(t)
	ctx := context.Background()
	st, err := store.New(rdb, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Beat(ctx, "absent", []string{"chat", "worker"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: rdb, NodeID: "n", Models: map[string]llm.Model{"default": nodetest.Script(t, answering)}, OnCommit: c.Add})
	home := n.wakes.streams.Load().home
	absentHome := 0
	for range 12 {
		rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		if stream := store.WakeStream(store.DefaultPartitions, store.Partition(store.DefaultPartitions, rec.ID), "chat"); !slices.Contains(home, stream) {
			absentHome++
		}
		c.Wait(t, "the answer of "+rec.ID, func(r store.Record) bool { return r.ID == rec.ID })
	}
	if absentHome == 0 {
		t.Fatal("no process's wake stream was the absent node's: the test shows nothing")
	}
}
