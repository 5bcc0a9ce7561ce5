package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

var liveT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// liveNode starts a node on srv that runs no turn, with metrics of its own.
func liveNode(t *testing.T, srv *testutil.RedisServer, id string) (*Node, *Metrics) {
	t.Helper()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	n := startNode(t, Config{Redis: srv.Client(t), NodeID: id, Models: map[string]llm.Model{"default": partsModel(nil)}, Metrics: m})
	return n, m
}

// watch watches pid on n until the test ends, failing t when it cannot.
func watch(t *testing.T, n *Node, pid string) (<-chan live.Update, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := n.Watch(ctx, pid)
	if err != nil {
		t.Fatalf("Watch(%s): %v", pid, err)
	}
	return ch, cancel
}

// receive reads k updates of ch.
func receive(t *testing.T, ch <-chan live.Update, k int) []live.Update {
	t.Helper()
	var got []live.Update
	deadline := time.NewTimer(nodetest.WaitTimeout)
	defer deadline.Stop()
	for len(got) < k {
		select {
		case u, ok := <-ch:
			if !ok {
				t.Fatalf("the watch ended after %d updates, want %d", len(got), k)
			}
			got = append(got, u)
		case <-deadline.C:
			t.Fatalf("received %d updates in %s, want %d", len(got), nodetest.WaitTimeout, k)
		}
	}
	return got
}

// ended waits for ch to be closed and returns what it still held.
func ended(t *testing.T, ch <-chan live.Update) []live.Update {
	t.Helper()
	var rest []live.Update
	deadline := time.NewTimer(nodetest.WaitTimeout)
	defer deadline.Stop()
	for {
		select {
		case u, ok := <-ch:
			if !ok {
				return rest
			}
			rest = append(rest, u)
		case <-deadline.C:
			t.Fatal("the watch did not end")
		}
	}
}

// liveNumsub is how many clients Redis has subscribed to pid's live
// updates.
func liveNumsub(t *testing.T, rdb *redis.Client, pid string) int64 {
	t.Helper()
	channel := store.Key(store.DefaultPartitions, pid, "live")
	n, err := rdb.PubSubNumSub(context.Background(), channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n[channel]
}

// pubsubClients counts the connections subscribed to so many channels.
func pubsubClients(t *testing.T, rdb *redis.Client, channels int) int {
	t.Helper()
	list, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, fmt.Sprintf(" sub=%d ", channels)) {
			n++
		}
	}
	return n
}

// tool is an update that never joins another.
func tool(pid string, i int) live.Update {
	return live.Update{Process: pid, Turn: "t1", Round: 1, Kind: live.ToolStarted, At: liveT0, Tool: "http_fetch", CallID: fmt.Sprint("c", i)}
}

// text is a delta of pid's round 1 text at offset.
func text(pid, delta string, offset int) live.Update {
	return live.Update{Process: pid, Turn: "t1", Round: 1, Kind: live.Text, At: liveT0, Delta: delta, Offset: offset}
}

// The updates a turn publishes on one node reach a watcher on another,
// all of them, in order (as many as a watcher may be behind: none is
// dropped).
func TestLiveAcrossNodes(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	a, am := liveNode(t, srv, "a")
	b, bm := liveNode(t, srv, "b")
	w, _ := watch(t, b, "p1")

	var want []live.Update
	for i := range watchBuffer {
		u := tool("p1", i)
		if i%3 == 1 {
			u = text("p1", fmt.Sprint(i), 1000*i) // gaps: none is joined
		}
		want = append(want, u)
		a.live.Publish(u)
	}
	if diff := cmp.Diff(want, receive(t, w, len(want))); diff != "" {
		t.Errorf("received (-published +got):\n%s", diff)
	}
	if err := a.Stop(context.Background()); err != nil { // its sender has counted
		t.Fatal(err)
	}
	if got := promtest.ToFloat64(am.liveOutcomes[livePublished]); got != watchBuffer {
		t.Errorf(`brain_live_updates_total{outcome="published"} = %v, want %d`, got, watchBuffer)
	}
	if got := promtest.ToFloat64(bm.watchDropped); got != 0 {
		t.Errorf("brain_live_watch_dropped_total = %v, want 0", got)
	}
}

// publishGate is a client hook that holds the first pipeline of PUBLISH
// commands once armed, until released, and records the size of each.
type publishGate struct {
	armed   atomic.Bool
	held    chan struct{} // receives when the pipeline is held
	release chan struct{}
	once    sync.Once

	mu    sync.Mutex
	sizes []int
}

func newPublishGate() *publishGate {
	g := &publishGate{held: make(chan struct{}, 1), release: make(chan struct{})}
	g.armed.Store(true)
	return g
}

// open releases the held pipeline, and lets every later one go.
func (g *publishGate) open() { g.once.Do(func() { close(g.release) }) }

func (g *publishGate) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (g *publishGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (g *publishGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if c.Name() != "publish" {
				return next(ctx, cmds) // a new connection's handshake
			}
		}
		g.mu.Lock()
		g.sizes = append(g.sizes, len(cmds))
		g.mu.Unlock()
		if g.armed.CompareAndSwap(true, false) {
			g.held <- struct{}{}
			<-g.release
		}
		return next(ctx, cmds)
	}
}

func (g *publishGate) pipelines() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.sizes...)
}

// gatedPublisher starts a publisher of size on srv whose first batch waits
// at the gate until the test releases it; it stops when the test ends.
func gatedPublisher(t *testing.T, srv *testutil.RedisServer, size int) (*publisher, *publishGate, *Metrics) {
	t.Helper()
	rdb := srv.Client(t)
	g := newPublishGate()
	rdb.AddHook(g)
	st, err := store.New(rdb, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(prometheus.NewPedanticRegistry())
	p := newPublisher(st, size, m, zap.NewNop())
	p.start()
	t.Cleanup(func() { g.open(); p.stop() })
	return p, g, m
}

// Deltas published while a batch is on its way go in the next batch, one
// pipeline, and those that continue one another are joined: fewer
// updates, whose deltas make the whole text at the right offsets. A gap,
// another kind or another round starts a new update; another process's
// deltas between them do not.
func TestPublisherCoalesces(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	b, _ := liveNode(t, srv, "b")
	p1, _ := watch(t, b, "p1")
	p2, _ := watch(t, b, "p2")
	p, g, m := gatedPublisher(t, srv, liveBuffer)

	p.Publish(text("p1", "The ", 0))
	<-g.held // the first batch waits: what follows accumulates
	words := strings.Fields("quick brown fox jumps over the lazy dog")
	off := len("The ")
	for i, w := range words {
		p.Publish(text("p1", w+" ", off))
		p.Publish(text("p2", fmt.Sprint(i), i))
		off += len(w) + 1
	}
	p.Publish(tool("p1", 1))
	p.Publish(text("p1", "Done", off))
	p.Publish(text("p1", "ne.", off+2)) // overlaps: not joined
	answer := live.Update{Process: "p1", Turn: "t1", Round: 1, Kind: live.Answer, At: liveT0, Delta: "Hi", User: true}
	p.Publish(answer)
	p.Publish(live.Update{Process: "p1", Turn: "t1", Round: 1, Kind: live.Answer, At: liveT0, Delta: "!", Offset: 2, User: true})
	p.Publish(text("p1", " round 2", 0)) // round 2's text starts at 0, as would a new round's
	g.open()

	joined := answer
	joined.Delta = "Hi!"
	wantP1 := []live.Update{
		text("p1", "The ", 0),
		text("p1", "quick brown fox jumps over the lazy dog ", len("The ")),
		tool("p1", 1),
		text("p1", "Done", off),
		text("p1", "ne.", off+2),
		joined,
		text("p1", " round 2", 0),
	}
	if diff := cmp.Diff(wantP1, receive(t, p1, len(wantP1))); diff != "" {
		t.Errorf("p1 received (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]live.Update{text("p2", "01234567", 0)}, receive(t, p2, 1)); diff != "" {
		t.Errorf("p2 received (-want +got):\n%s", diff)
	}
	p.stop() // its sender has counted
	if diff := cmp.Diff([]int{1, len(wantP1) - 1 + 1}, g.pipelines()); diff != "" {
		t.Errorf("pipelines' PUBLISH commands (-want +got):\n%s", diff)
	}
	for o, want := range map[liveOutcome]float64{livePublished: 8, liveCoalesced: 15, liveDropped: 0, liveFailed: 0} {
		if got := promtest.ToFloat64(m.liveOutcomes[o]); got != want {
			t.Errorf("brain_live_updates_total{outcome=%q} = %v, want %v", liveOutcomeNames[o], got, want)
		}
	}
}

// The coalescer joins only what continues the same text of the same
// process, in any batch it is given after another.
func TestCoalesce(t *testing.T) {
	t.Parallel()
	round := func(u live.Update, r int) live.Update { u.Round = r; return u }
	turn := func(u live.Update, id string) live.Update { u.Turn = id; return u }
	user := func(u live.Update) live.Update { u.User = true; return u }
	answer := func(u live.Update) live.Update { u.Kind = live.Answer; return u }
	for _, tc := range []struct {
		name    string
		batch   []live.Update
		want    []live.Update
		joinedN int
	}{
		{"empty", nil, nil, 0},
		{"one", []live.Update{text("p", "a", 0)}, []live.Update{text("p", "a", 0)}, 0},
		{"a run", []live.Update{text("p", "a", 0), text("p", "bc", 1), text("p", "", 3), text("p", "d", 3)}, []live.Update{text("p", "abcd", 0)}, 3},
		{"two runs apart", []live.Update{text("p", "a", 0), tool("p", 1), text("p", "b", 1), text("p", "c", 2)},
			[]live.Update{text("p", "a", 0), tool("p", 1), text("p", "bc", 1)}, 1},
		{"a gap", []live.Update{text("p", "a", 0), text("p", "c", 2)}, []live.Update{text("p", "a", 0), text("p", "c", 2)}, 0},
		{"interleaved processes", []live.Update{text("p", "a", 0), text("q", "x", 5), text("p", "b", 1), text("q", "y", 6)},
			[]live.Update{text("p", "ab", 0), text("q", "xy", 5)}, 2},
		{"another round", []live.Update{text("p", "a", 0), round(text("p", "b", 1), 2)}, []live.Update{text("p", "a", 0), round(text("p", "b", 1), 2)}, 0},
		{"another turn", []live.Update{text("p", "a", 0), turn(text("p", "b", 1), "t2")}, []live.Update{text("p", "a", 0), turn(text("p", "b", 1), "t2")}, 0},
		{"text then answer", []live.Update{text("p", "a", 0), answer(text("p", "b", 1))}, []live.Update{text("p", "a", 0), answer(text("p", "b", 1))}, 0},
		{"user differs", []live.Update{text("p", "a", 0), user(text("p", "b", 1))}, []live.Update{text("p", "a", 0), user(text("p", "b", 1))}, 0},
		{"answers", []live.Update{user(answer(text("p", "a", 0))), user(answer(text("p", "b", 1)))}, []live.Update{user(answer(text("p", "ab", 0)))}, 1},
		{"tools never", []live.Update{tool("p", 1), tool("p", 1)}, []live.Update{tool("p", 1), tool("p", 1)}, 0},
	} {
		var c coalescer
		for pass := range 2 { // the second with the first's buffers
			got, joined := c.coalesce(append([]live.Update(nil), tc.batch...))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" || joined != tc.joinedN {
				t.Errorf("%s, pass %d: joined %d, want %d; updates (-want +got):\n%s", tc.name, pass, joined, tc.joinedN, diff)
			}
		}
	}
}

// Two watchers of a process and one of another, on one node: each gets
// exactly its process's updates, over one Pub/Sub connection subscribed
// once to each process.
func TestWatchersGetTheirProcesses(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	rdb := srv.Client(t)
	a, _ := liveNode(t, srv, "a")
	b, _ := liveNode(t, srv, "b")
	w1, stop1 := watch(t, b, "p1")
	w2, stop2 := watch(t, b, "p1")
	w3, stop3 := watch(t, b, "p2")
	if n := liveNumsub(t, rdb, "p1"); n != 1 {
		t.Errorf("%d subscriptions to p1, want 1 for its two watchers", n)
	}
	// (Each node has a connection of its own for its signals, on one
	// channel: the watchers' is the one on both processes' channels.)
	if n := pubsubClients(t, rdb, 2); n != 1 {
		t.Errorf("%d Pub/Sub connections on two channels, want 1 for the node's three watchers", n)
	}

	var want1, want2 []live.Update
	for i := range 20 {
		u1, u2 := tool("p1", i), tool("p2", i)
		a.live.Publish(u1)
		a.live.Publish(tool("p3", i))
		a.live.Publish(u2)
		want1, want2 = append(want1, u1), append(want2, u2)
	}
	a.live.Publish(tool("p3", -1)) // last of all: it has gone wherever it went before the others end
	a.live.Publish(tool("p1", -1))
	a.live.Publish(tool("p2", -1))
	want1, want2 = append(want1, tool("p1", -1)), append(want2, tool("p2", -1))
	for _, w := range []struct {
		ch   <-chan live.Update
		stop context.CancelFunc
		want []live.Update
	}{{w1, stop1, want1}, {w2, stop2, want1}, {w3, stop3, want2}} {
		got := receive(t, w.ch, len(w.want))
		w.stop()
		got = append(got, ended(t, w.ch)...)
		if diff := cmp.Diff(w.want, got); diff != "" {
			t.Errorf("a watcher of %s received (-want +got):\n%s", w.want[0].Process, diff)
		}
	}
}

// A watcher whose context ends has its channel closed; the process stays
// subscribed while it has another watcher, and is unsubscribed when its
// last goes.
func TestWatcherLeaves(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	rdb := srv.Client(t)
	a, _ := liveNode(t, srv, "a")
	b, _ := liveNode(t, srv, "b")
	first, stopFirst := watch(t, b, "p1")
	second, stopSecond := watch(t, b, "p1")

	stopFirst()
	if rest := ended(t, first); len(rest) != 0 {
		t.Errorf("the first watcher got %+v", rest)
	}
	a.live.Publish(tool("p1", 1))
	receive(t, second, 1) // still subscribed

	stopSecond()
	ended(t, second)
	deadline := time.Now().Add(nodetest.WaitTimeout)
	for liveNumsub(t, rdb, "p1") != 0 { // each look a round trip to Redis
		if time.Now().After(deadline) {
			t.Fatal("p1 is still subscribed after its last watcher left")
		}
	}
	b.watch.mu.Lock()
	defer b.watch.mu.Unlock()
	if len(b.watch.topics) != 0 {
		t.Errorf("the hub still has topics %v", b.watch.topics)
	}
}

// A watcher that never reads loses updates once its buffer is full; the
// other watchers of its process get every one, and the losses count.
func TestSlowWatcher(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	a, _ := liveNode(t, srv, "a")
	b, bm := liveNode(t, srv, "b")
	b.watch.buffer = 4
	slow, _ := watch(t, b, "p1")
	fast, _ := watch(t, b, "p1")
	for i := range 10 {
		a.live.Publish(tool("p1", i))
		if got := receive(t, fast, 1); got[0].CallID != fmt.Sprint("c", i) {
			t.Fatalf("the fast watcher got %+v, want c%d", got, i)
		}
	}
	if got := promtest.ToFloat64(bm.watchDropped); got != 6 {
		t.Errorf("brain_live_watch_dropped_total = %v, want 6 (10 updates, 4 kept)", got)
	}
	if len(slow) != 4 {
		t.Errorf("the slow watcher holds %d updates, want 4", len(slow))
	}
}

// publishAll publishes us on p from a goroutine and fails t if that does
// not return: Publish must never wait.
func publishAll(t *testing.T, p *publisher, us []live.Update) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, u := range us {
			p.Publish(u)
		}
	}()
	select {
	case <-done:
	case <-time.After(nodetest.WaitTimeout):
		t.Fatal("Publish blocked")
	}
}

// With the buffer full, Publish drops the update at once and counts it.
func TestPublishDropsWhenFull(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	p, g, m := gatedPublisher(t, srv, 8)
	p.Publish(tool("p1", 0))
	<-g.held // the sender is stuck: the buffer fills
	var us []live.Update
	for i := range 108 {
		us = append(us, tool("p1", i+1))
	}
	publishAll(t, p, us)
	if got := promtest.ToFloat64(m.liveOutcomes[liveDropped]); got != 100 {
		t.Errorf(`brain_live_updates_total{outcome="dropped"} = %v, want 100`, got)
	}
	g.open()
	p.stop()
	if got := promtest.ToFloat64(m.liveOutcomes[livePublished]); got != 9 {
		t.Errorf(`brain_live_updates_total{outcome="published"} = %v, want 9`, got)
	}
	p.Publish(tool("p1", 0)) // stopped: dropped
	if got := promtest.ToFloat64(m.liveOutcomes[liveDropped]); got != 101 {
		t.Errorf(`brain_live_updates_total{outcome="dropped"} = %v after stop, want 101`, got)
	}
}

// With Redis down, Publish returns at once as well, and every update is
// counted as failed or dropped.
func TestPublishWithRedisDown(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	a, m := liveNode(t, srv, "a")
	srv.Shutdown(t)
	var us []live.Update
	for i := range 2 * liveBuffer {
		us = append(us, text("p1", "x", i))
	}
	publishAll(t, a.live, us)
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	count := func(o liveOutcome) float64 { return promtest.ToFloat64(m.liveOutcomes[o]) }
	if got := count(liveFailed) + count(liveDropped); got != float64(len(us)) || count(livePublished)+count(liveCoalesced) != 0 {
		t.Errorf("failed %v + dropped %v, published %v, coalesced %v; want failed + dropped = %d",
			count(liveFailed), count(liveDropped), count(livePublished), count(liveCoalesced), len(us))
	}
}

// Watch fails when Redis cannot be reached, and on a node that is not
// running; a node that stops ends its watchers' streams.
func TestWatchErrors(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	n, _ := liveNode(t, srv, "b")
	ch, _ := watch(t, n, "p1")
	if _, err := n.Watch(context.Background(), "no}such"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Watch of an id that cannot be a process: %v, want store.ErrNotFound", err)
	}
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	ended(t, ch)
	if _, err := n.Watch(context.Background(), "p1"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Watch on a stopped node: %v, want ErrNotRunning", err)
	}

	down := testutil.StartRedis(t)
	d, _ := liveNode(t, down, "d")
	down.Shutdown(t)
	if _, err := d.Watch(context.Background(), "p1"); err == nil || errors.Is(err, ErrNotRunning) {
		t.Errorf("Watch with Redis down: %v, want Redis's error", err)
	}
	d.watch.mu.Lock()
	defer d.watch.mu.Unlock()
	if len(d.watch.topics) != 0 {
		t.Errorf("the hub keeps topics %v of a Watch that failed", d.watch.topics)
	}
}
