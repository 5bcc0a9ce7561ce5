package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/provider"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/mcp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout bounds every wait of these tests; it never paces them.
const waitTimeout = 60 * time.Second

func testRecipes(t testing.TB) *recipes.Library {
	t.Helper()
	lib, err := recipes.LoadDir("testdata/recipes")
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func script(t testing.TB, yaml string) *scripted.Model {
	t.Helper()
	s, err := scripted.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return scripted.New(s)
}

// commits collects the turns a node commits, for tests to wait on.
type commits struct {
	mu   sync.Mutex
	recs []store.Record
	ch   chan struct{}
}

func newCommits() *commits { return &commits{ch: make(chan struct{}, 1)} }

func (c *commits) add(rec store.Record, _ []conversation.Event) {
	c.mu.Lock()
	c.recs = append(c.recs, rec)
	c.mu.Unlock()
	select {
	case c.ch <- struct{}{}:
	default:
	}
}

// records returns the records committed so far.
func (c *commits) records() []store.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]store.Record(nil), c.recs...)
}

// wait waits until some committed record satisfies ok.
func (c *commits) wait(t testing.TB, what string, ok func(store.Record) bool) store.Record {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		for _, r := range c.records() {
			if ok(r) {
				return r
			}
		}
		select {
		case <-c.ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func startNode(t testing.TB, cfg Config) *Node {
	t.Helper()
	if cfg.Recipes == nil {
		cfg.Recipes = testRecipes(t)
	}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	return n
}

const delegation = `
turns:
  - match: "[process_event"
    rounds:
      - calls:
          - name: respond
            args: {message: "The worker reported back.", awaiting_user_input: true}
  - match: "TASK:"
    rounds:
      - calls:
          - name: finish_task
            args: {result: "three rows", status: done}
  - rounds:
      - calls:
          - name: spawn_worker
            args: {recipe: marvin-worker, task: "TASK: count the rows"}
      - calls:
          - name: respond
            args: {message: "A worker is on it.", awaiting_user_input: false}
`

// A parent spawns a worker, goes READY; the worker finishes; its result
// wakes the parent by itself, which answers and goes BLOCKED.
func TestWorkerResultWakesTheParent(t *testing.T) {
	t.Parallel()
	c := newCommits()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": script(t, delegation)},
		Recipes: recipes.Builtin(), OnCommit: c.add, LeaseTTL: 2 * time.Second})
	ctx := context.Background()
	parent, err := n.Create(ctx, NewProcess{Recipe: "arthur", Input: "count the rows", Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the parent to go READY", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Ready })
	child := c.wait(t, "the worker to finish", func(r store.Record) bool { return r.Parent == parent.ID && r.Status.State == lifecycle.Done })
	c.wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })

	evs, err := n.Store().Log(ctx, parent.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got *conversation.ProcessEvent
	for _, e := range evs {
		if m := e.InboxMessage; m != nil && m.Kind == conversation.KindProcessEvent {
			got = new(conversation.ProcessEvent)
			if err := json.Unmarshal([]byte(m.Content), got); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := conversation.ProcessEvent{Child: child.ID, Recipe: "marvin-worker", Status: "done", Result: "three rows"}
	if got == nil || !cmp.Equal(*got, want) {
		t.Fatalf("parent's process_event = %+v, want %+v", got, want)
	}
	if child.Depth != 1 || child.Owner != "ada" {
		t.Errorf("worker depth %d, owner %q; want 1, ada (its parent's)", child.Depth, child.Owner)
	}
	owned, _, err := n.Store().ListOwned(ctx, "ada", "", "", 10)
	if err != nil || len(owned) != 2 {
		t.Errorf("ada's processes: %d, %v; want the parent and its worker", len(owned), err)
	}
}

func TestFailingWorkerReportsFailed(t *testing.T) {
	t.Parallel()
	c := newCommits()
	model := script(t, `
turns:
  - match: "[process_event"
    rounds:
      - calls: [{name: respond, args: {message: "It failed."}}]
  - match: "TASK:"
    rounds:
      - calls: [{name: finish_task, args: {result: "source unreachable", status: failed}}]
  - rounds:
      - calls: [{name: spawn_worker, args: {recipe: failing-worker, task: "TASK: fetch"}}]
      - calls: [{name: respond, args: {message: "Started.", awaiting_user_input: false}}]
`)
	lib, err := recipes.LoadDir("testdata/recipes")
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Recipes: lib, OnCommit: c.add})
	parent, err := n.Create(context.Background(), NewProcess{Recipe: "arthur", Input: "fetch it"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })
	evs, err := n.Store().Log(context.Background(), parent.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if m := e.InboxMessage; m != nil && m.Kind == conversation.KindProcessEvent {
			found = strings.Contains(m.Content, `"status":"failed"`) && strings.Contains(m.Content, "source unreachable")
		}
	}
	if !found {
		t.Fatal("the parent's log has no process_event with status failed")
	}
}

// A worker whose provider refuses the key, and whose fallback is down,
// fails; its parent is told, with the reason, and wakes.
func TestWorkerWithARefusedKeyFails(t *testing.T) {
	t.Parallel()
	c := newCommits()
	parentModel := script(t, `
turns:
  - match: "[process_event"
    rounds:
      - calls: [{name: respond, args: {message: "It failed."}}]
  - rounds:
      - calls: [{name: spawn_worker, args: {recipe: keyless-worker, task: "TASK: fetch"}}]
      - calls: [{name: respond, args: {message: "Started.", awaiting_user_input: false}}]
`)
	lib, err := recipes.LoadDir("testdata/recipes")
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Value
	models := map[string]llm.Model{
		"default": parentModel,
		"keyless": failingModel{err: &provider.Error{Provider: "openai", Kind: provider.ErrAuth, StatusCode: 401, Message: "Incorrect API key"}},
		"down":    failingModel{err: &provider.Error{Provider: "anthropic", Kind: provider.ErrUnavailable, StatusCode: 529}, asked: &asked},
	}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: models, Recipes: lib, OnCommit: c.add})
	parent, err := n.Create(context.Background(), NewProcess{Recipe: "arthur", Input: "fetch it"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the worker to fail", func(r store.Record) bool { return r.Parent == parent.ID && r.Status.State == lifecycle.Failed })
	c.wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })
	if got, _ := asked.Load().(string); got != "backup-model" {
		t.Errorf("the fallback was asked for %q, want backup-model", got)
	}
	evs, err := n.Store().Log(context.Background(), parent.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if m := e.InboxMessage; m != nil && m.Kind == conversation.KindProcessEvent {
			found = strings.Contains(m.Content, `"status":"failed"`) && strings.Contains(m.Content, "refused the credentials")
		}
	}
	if !found {
		t.Fatal("the parent's log has no process_event with status failed and the reason")
	}
}

// failingModel fails every call with err, recording the model name asked.
type failingModel struct {
	err   error
	asked *atomic.Value
}

func (m failingModel) Generate(_ context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	if m.asked != nil {
		m.asked.Store(req.Params.Model)
	}
	return func(yield func(llm.Part, error) bool) { yield(llm.Part{}, m.err) }
}

// A node dies in the middle of a turn, after one tool ran and while another
// runs. A second node takes over after the lease TTL: the finished tool is
// not run again, the unfinished call gets the orphan result, the message
// is in the log exactly once, and the turn completes.
func TestRecoveryAfterANodeDies(t *testing.T) {
	t.Parallel()
	var stepHits, hangHits atomic.Int32
	hanging := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/step":
			stepHits.Add(1)
			fmt.Fprint(w, "step done")
		case "/hang":
			hangHits.Add(1)
			hanging <- struct{}{}
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	model := script(t, fmt.Sprintf(`
turns:
  - rounds:
      - calls:
          - {name: http_fetch, args: {url: "%[1]s/step"}}
          - {name: http_fetch, args: {url: "%[1]s/hang"}}
      - calls:
          - {name: respond, args: {message: "Recovered."}}
`, srv.URL))
	redisSrv := testutil.StartRedis(t)
	models := map[string]llm.Model{"default": model}
	const ttl = 600 * time.Millisecond

	clientA := redis.NewClient(&redis.Options{Addr: redisSrv.Addr})
	a := startNode(t, Config{Redis: clientA, NodeID: "a", Models: models, LeaseTTL: ttl})
	ctx := context.Background()
	rec, err := a.Create(ctx, NewProcess{Recipe: "fetcher", Input: "fetch both"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-hanging:
	case <-time.After(waitTimeout):
		t.Fatal("node a never reached the second tool")
	}
	// Node a dies: it loses Redis and can neither renew nor write.
	_ = clientA.Close()

	c := newCommits()
	startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "b", Models: models, LeaseTTL: ttl, OnCommit: c.add})
	done := c.wait(t, "node b to finish the turn", func(r store.Record) bool { return r.ID == rec.ID })
	if done.Status.State != lifecycle.Blocked {
		t.Fatalf("state after recovery = %s, want BLOCKED", done.Status)
	}
	if s, h := stepHits.Load(), hangHits.Load(); s != 1 || h != 1 {
		t.Errorf("tool runs: step %d, hang %d; want each once", s, h)
	}
	evs, err := redisLog(t, redisSrv, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	var inbox, results []string
	var recovered bool
	for _, e := range evs {
		switch {
		case e.InboxMessage != nil:
			inbox = append(inbox, e.InboxMessage.Content)
		case e.ToolCallResponse != nil:
			results = append(results, conversation.TextOf(e.ToolCallResponse.Content))
		case e.StateChange != nil && e.StateChange.Event == string(lifecycle.Recover):
			recovered = true
		}
	}
	if len(inbox) != 1 || inbox[0] != "fetch both" {
		t.Errorf("inbox messages in the log = %q, want the one message once", inbox)
	}
	if !recovered {
		t.Error("no recover transition in the log")
	}
	if len(results) != 3 || results[0] != "step done" || results[1] != rounds.OrphanedCallError {
		t.Errorf("tool results = %q; want step's result, the orphan result, then respond's", results)
	}
}

// A turn that runs for many lease TTLs keeps its lease: the node renews
// it, so its own takeover loop never finds the wake stale, and the turn
// commits under its first claim, without a recovery.
func TestLongTurnKeepsItsLease(t *testing.T) {
	t.Parallel()
	hanging, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hanging <- struct{}{}:
		default: // a second call: the test fails on the recovery anyway
		}
		<-release
		fmt.Fprint(w, "done at last")
	}))
	defer srv.Close()
	defer close(release) // before srv.Close on a failure: the handler must return
	model := script(t, fmt.Sprintf(`
turns:
  - rounds:
      - calls:
          - {name: http_fetch, args: {url: "%s/slow"}}
      - calls:
          - {name: respond, args: {message: "Fetched."}}
`, srv.URL))
	redisSrv := testutil.StartRedis(t)
	rdb := redisSrv.Client(t)
	const ttl = 600 * time.Millisecond // as TestRecoveryAfterANodeDies: room for a busy CI machine
	c := newCommits()
	n := startNode(t, Config{Redis: rdb, NodeID: "a", Models: map[string]llm.Model{"default": model}, LeaseTTL: ttl, OnCommit: c.add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "fetcher", Input: "fetch it"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-hanging:
	case <-time.After(waitTimeout):
		t.Fatal("the turn never reached its tool")
	}
	// Four renewals: the lease's time to live goes up four times, and the
	// lease stays the first claim's all along.
	lease := "brain:{" + rec.ID + "}:lease"
	first, err := rdb.Get(ctx, lease).Result()
	if err != nil {
		t.Fatal(err)
	}
	renewals, last := 0, time.Duration(0)
	deadline := time.Now().Add(waitTimeout)
	for renewals < 4 && time.Now().Before(deadline) {
		value, err := rdb.Get(ctx, lease).Result()
		if err != nil || value != first {
			t.Fatalf("lease = %q, %v; want %q, the first claim's, kept", value, err, first)
		}
		left, err := rdb.PTTL(ctx, lease).Result()
		if err != nil {
			t.Fatal(err)
		}
		if left > last {
			renewals++
		}
		last = left
		time.Sleep(ttl / 20) // the polling interval; the loop waits on what it sees
	}
	if renewals < 4 {
		t.Fatalf("saw %d renewals in %s, want 4", renewals, waitTimeout)
	}
	release <- struct{}{}
	done := c.wait(t, "the long turn's commit", func(r store.Record) bool { return r.ID == rec.ID })
	if done.Status.State != lifecycle.Blocked {
		t.Errorf("state after the turn = %s, want BLOCKED", done.Status)
	}
	evs, err := redisLog(t, redisSrv, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.StateChange != nil && e.StateChange.Event == string(lifecycle.Recover) {
			t.Errorf("the turn was recovered (%+v): its lease was not kept", e)
		}
	}
}

func redisLog(t testing.TB, srv *testutil.RedisServer, pid string) ([]conversation.Event, error) {
	st, err := store.New(srv.Client(t), store.Config{})
	if err != nil {
		return nil, err
	}
	return st.Log(context.Background(), pid, "", 0)
}

// exclusive wraps a model and fails the test when two turns of one process
// call it at the same time.
type exclusive struct {
	llm.Model
	mu       sync.Mutex
	inflight map[string]bool
	overlaps atomic.Int32
}

func (x *exclusive) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	c, _ := tools.CallerFrom(ctx)
	return func(yield func(llm.Part, error) bool) {
		x.mu.Lock()
		if x.inflight[c.ProcessID] {
			x.overlaps.Add(1)
		}
		x.inflight[c.ProcessID] = true
		x.mu.Unlock()
		defer func() {
			x.mu.Lock()
			delete(x.inflight, c.ProcessID)
			x.mu.Unlock()
		}()
		for p, err := range x.Model.Generate(ctx, req) {
			if !yield(p, err) {
				return
			}
		}
	}
}

// Four nodes share the work of many processes while nodes stop and start:
// every message is drained exactly once, no process ever runs on two nodes
// at once, and every process ends BLOCKED with an empty inbox.
func TestLoadWithNodesComingAndGoing(t *testing.T) {
	t.Parallel()
	procs, msgs := 200, 10
	if testing.Short() {
		procs, msgs = 40, 5
	}
	redisSrv := testutil.StartRedis(t)
	model := &exclusive{Model: script(t, `turns: [{rounds: [{calls: [{name: respond, args: {message: "ok"}}]}]}]`), inflight: map[string]bool{}}
	models := map[string]llm.Model{"default": model}

	var mu sync.Mutex
	drained := map[string]int{} // message id -> times drained
	progress := make(chan struct{}, 1)
	onCommit := func(rec store.Record, evs []conversation.Event) {
		mu.Lock()
		for _, e := range evs {
			if e.InboxMessage != nil && e.Turn != "" {
				drained[rec.ID+"/"+e.InboxMessage.MessageID]++
			}
		}
		mu.Unlock()
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	newNode := func(i int) *Node {
		n, err := New(Config{Redis: redisSrv.Client(t), NodeID: fmt.Sprintf("n%d", i), Models: models,
			Recipes: testRecipes(t), LeaseTTL: time.Second, Grace: 5 * time.Second, OnCommit: onCommit, Concurrency: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return n
	}
	nodes := []*Node{newNode(0), newNode(1), newNode(2), newNode(3)}
	defer func() {
		for _, n := range nodes {
			_ = n.Stop(context.Background())
		}
	}()

	ctx := context.Background()
	pids := make([]string, procs)
	for i := range pids {
		rec, err := nodes[0].Create(ctx, NewProcess{Recipe: "default"})
		if err != nil {
			t.Fatal(err)
		}
		pids[i] = rec.ID
	}
	for m := range msgs {
		for _, pid := range pids {
			if _, err := nodes[0].Send(ctx, pid, "user:ada", fmt.Sprintf("message %d", m), ""); err != nil {
				t.Fatal(err)
			}
		}
		// Stop one node and start a fresh one in its place.
		k := m % len(nodes)
		if err := nodes[k].Stop(ctx); err != nil {
			t.Fatal(err)
		}
		nodes[k] = newNode(len(nodes) + m)
	}

	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		mu.Lock()
		n := len(drained)
		mu.Unlock()
		if n == procs*msgs {
			break
		}
		select {
		case <-progress:
		case <-deadline.C:
			t.Fatalf("drained %d of %d messages", n, procs*msgs)
		}
	}
	// Each process gets its final commit after its last drain; wait until
	// none is left running.
	st, err := store.New(redisSrv.Client(t), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitState(t, st, pid, lifecycle.Blocked, progress)
		evs, err := st.Log(ctx, pid, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, e := range evs {
			if e.InboxMessage != nil {
				seen[e.InboxMessage.MessageID]++
			}
		}
		if len(seen) != msgs {
			t.Fatalf("process %s drained %d distinct messages, want %d", pid, len(seen), msgs)
		}
		for id, k := range seen {
			if k != 1 {
				t.Fatalf("process %s: message %s is in the log %d times", pid, id, k)
			}
		}
		if in, err := st.Inbox(ctx, pid); err != nil || len(in) != 0 {
			t.Fatalf("process %s inbox = %d messages, %v; want empty", pid, len(in), err)
		}
	}
	if o := model.overlaps.Load(); o != 0 {
		t.Fatalf("%d times a process ran on two nodes at once", o)
	}
}

func waitState(t testing.TB, st *store.Store, pid string, want lifecycle.State, progress <-chan struct{}) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		rec, err := st.Get(context.Background(), pid)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status.State == want {
			return
		}
		select {
		case <-progress:
		case <-deadline.C:
			t.Fatalf("process %s is %s, want %s", pid, rec.Status, want)
		}
	}
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A due timer fires once across three nodes, survives a node restart, and
// a cancelled one never fires.
func TestTimersFireOnceAcrossNodes(t *testing.T) {
	t.Parallel()
	redisSrv := testutil.StartRedis(t)
	clock := &fakeClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	models := map[string]llm.Model{"default": script(t, `turns: [{rounds: [{calls: [{name: respond, args: {message: "ok"}}]}]}]`)}
	mk := func(id string) *Node {
		n, err := New(Config{Redis: redisSrv.Client(t), NodeID: id, Models: models, Recipes: testRecipes(t), Clock: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return n // not started: the test fires timers by hand
	}
	nodes := []*Node{mk("a"), mk("b"), mk("c")}
	ctx := context.Background()
	rec, err := nodes[0].Create(ctx, NewProcess{Recipe: "default"})
	if err != nil {
		t.Fatal(err)
	}
	caller := tools.Caller{ProcessID: rec.ID, Recipe: "default"}
	if _, _, err := nodes[0].ScheduleWakeup(ctx, caller, tools.Wakeup{In: time.Minute, Message: "standup"}); err != nil {
		t.Fatal(err)
	}
	cancelled, _, err := nodes[0].ScheduleWakeup(ctx, caller, tools.Wakeup{In: time.Minute, Message: "never"})
	if err != nil {
		t.Fatal(err)
	}
	if err := nodes[1].CancelWakeup(ctx, caller, cancelled); err != nil {
		t.Fatal(err)
	}
	fire := func() int {
		var total atomic.Int32
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Go(func() {
				k, err := n.FireDueTimers(ctx)
				if err != nil {
					t.Error(err)
				}
				total.Add(int32(k))
			})
		}
		wg.Wait()
		return int(total.Load())
	}
	if got := fire(); got != 0 {
		t.Fatalf("%d timers fired before they were due", got)
	}
	clock.Add(2 * time.Minute)
	nodes[2] = mk("c-restarted") // a restarted node sees the same timers
	if got := fire(); got != 1 {
		t.Fatalf("%d firings across three nodes, want exactly 1", got)
	}
	if got := fire(); got != 0 {
		t.Fatalf("a one-shot timer fired again (%d)", got)
	}
	in, err := nodes[0].Store().Inbox(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 1 || in[0].Kind != conversation.KindSchedule || in[0].Content != "standup" {
		t.Fatalf("inbox = %+v, want one schedule message \"standup\"", in)
	}
}

// blockingModel answers respond once release is closed.
type blockingModel struct {
	entered chan struct{}
	release chan struct{}
}

func (m *blockingModel) Generate(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		m.entered <- struct{}{}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(llm.Part{}, ctx.Err())
			return
		}
		yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "c1", Name: "respond", Arguments: []byte(`{"message":"done"}`)}}, nil)
	}
}

// Stop lets the running turn finish: no lease and no RUNNING process stay
// behind.
func TestGracefulStop(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	model := &blockingModel{entered: make(chan struct{}, 1), release: make(chan struct{})}
	n, err := New(Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, Recipes: testRecipes(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	<-model.entered
	stopped := make(chan error, 1)
	go func() { stopped <- n.Stop(ctx) }()
	close(model.release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	got, err := n.Store().Get(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != lifecycle.Blocked {
		t.Errorf("state after stop = %s, want BLOCKED", got.Status)
	}
	keys, err := rdb.Keys(ctx, "brain:*lease*").Result()
	if err != nil || len(keys) != 0 {
		t.Errorf("leases left after stop: %v (%v)", keys, err)
	}
	if err := n.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Engines: []string{"chat", "robot"}, Concurrency: -1, HistoryBytes: -1, RetainFinished: -time.Hour, MaxLogEvents: 10, OwnerLimit: -1})
	for _, want := range []string{"Redis: required", "Models: required", "Concurrency: must be at least 1", `unknown engine "robot"`, "HistoryBytes: must be positive (got -1)",
		"RetainFinished: must not be negative (got -1h0m0s)", "MaxLogEvents: must be 0 (keep every event) or between 100 and 100000000 (got 10)",
		"OwnerLimit: must not be negative (got -1)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New error %v lacks %q", err, want)
		}
	}
}

// A node limited to some engines never takes a wake of another: the
// worker's wake waits for a node that runs workers.
func TestEnginesPartitionWakes(t *testing.T) {
	t.Parallel()
	redisSrv := testutil.StartRedis(t)
	models := map[string]llm.Model{"default": script(t, delegation)}
	chatCommits, workerCommits := newCommits(), newCommits()
	chatNode := startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "chat", Engines: []string{"chat"},
		Models: models, Recipes: recipes.Builtin(), OnCommit: chatCommits.add})
	ctx := context.Background()
	parent, err := chatNode.Create(ctx, NewProcess{Recipe: "arthur", Input: "count the rows"})
	if err != nil {
		t.Fatal(err)
	}
	chatCommits.wait(t, "the parent to go READY", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Ready })

	startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "worker", Engines: []string{"worker"},
		Models: models, Recipes: recipes.Builtin(), OnCommit: workerCommits.add})
	workerCommits.wait(t, "the worker to finish", func(r store.Record) bool { return r.Parent == parent.ID && r.Status.State == lifecycle.Done })
	chatCommits.wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })

	for _, r := range chatCommits.records() {
		if r.Engine != "chat" {
			t.Errorf("the chat node ran a %s process (%s)", r.Engine, r.ID)
		}
	}
	for _, r := range workerCommits.records() {
		if r.Engine != "worker" {
			t.Errorf("the worker node ran a %s process (%s)", r.Engine, r.ID)
		}
	}
}

// A recipe's wakeup.schedules are armed when a process is created; each
// firing posts a schedule message and re-arms the timer for the next time.
func TestRecipeSchedules(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)}
	n, err := New(Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": script(t, delegation)},
		Recipes: testRecipes(t), Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "reminder"})
	if err != nil {
		t.Fatal(err)
	}
	timers, err := n.Store().Timers(ctx, rec.ID)
	if err != nil || len(timers) != 1 || !timers[0].Due.Equal(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("timers = %+v, %v; want one due at 10:00", timers, err)
	}
	clock.Add(45 * time.Minute) // 10:15
	if k, err := n.FireDueTimers(ctx); err != nil || k != 1 {
		t.Fatalf("FireDueTimers = %d, %v; want 1", k, err)
	}
	timers, err = n.Store().Timers(ctx, rec.ID)
	if err != nil || len(timers) != 1 || !timers[0].Due.Equal(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("after firing, timers = %+v, %v; want it re-armed for 11:00", timers, err)
	}
	in, err := n.Store().Inbox(ctx, rec.ID)
	if err != nil || len(in) != 1 || in[0].Content != "hourly check" || in[0].Kind != conversation.KindSchedule {
		t.Fatalf("inbox = %+v, %v; want the schedule message", in, err)
	}
}

// A node's inbox limit: a timer ticking into a full inbox drops its tick
// and moves on; a user message still wakes the BLOCKED process; one more
// is refused while the process has not read them. Both are counted.
func TestInboxLimitAtTheNode(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)}
	m := NewMetrics(prometheus.NewPedanticRegistry())
	n, err := New(Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": script(t, delegation)},
		Recipes: testRecipes(t), Clock: clock.Now, InboxLimit: 1, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "reminder"}) // BLOCKED, hourly
	if err != nil {
		t.Fatal(err)
	}
	fire := func(after time.Duration) {
		t.Helper()
		clock.Add(after)
		if k, err := n.FireDueTimers(ctx); err != nil || k != 1 {
			t.Fatalf("FireDueTimers = %d, %v; want 1", k, err)
		}
	}
	fire(30 * time.Minute) // 10:00: the hourly tick is stored
	if _, _, err := n.ScheduleWakeup(ctx, tools.Caller{ProcessID: rec.ID}, tools.Wakeup{In: 30 * time.Minute, Message: "half past"}); err != nil {
		t.Fatal(err)
	}
	fire(30 * time.Minute) // 10:30: the one-shot finds the inbox full
	fire(30 * time.Minute) // 11:00: the hourly tick joins the one waiting
	if timers, err := n.Store().Timers(ctx, rec.ID); err != nil || len(timers) != 1 || !timers[0].Due.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("timers = %+v, %v; want the timer moved on to 12:00", timers, err)
	}
	if _, err := n.Send(ctx, rec.ID, "user:ada", "hello", ""); err != nil {
		t.Fatalf("Send to the BLOCKED process = %v, want it taken", err)
	}
	if _, err := n.Send(ctx, rec.ID, "user:ada", "are you there?", ""); !errors.Is(err, store.ErrInboxFull) {
		t.Fatalf("Send to the READY process with a full inbox = %v, want ErrInboxFull", err)
	}
	in, err := n.Store().Inbox(ctx, rec.ID)
	if err != nil || len(in) != 2 || in[0].Kind != conversation.KindSchedule || in[1].Content != "hello" {
		t.Errorf("inbox = %+v, %v; want the first tick and hello", in, err)
	}
	for kind, want := range map[string]float64{"schedule": 1, "user": 1} {
		if got := promtest.ToFloat64(m.refused.WithLabelValues(kind)); got != want {
			t.Errorf("brain_inbox_refused_messages_total{%s} = %v, want %v", kind, got, want)
		}
	}
}

// panickingModel panics inside a turn.
type panickingModel struct{}

func (panickingModel) Generate(context.Context, *llm.Request) iter.Seq2[llm.Part, error] {
	return func(func(llm.Part, error) bool) { panic("model bug") }
}

// A panic inside a turn fails that process, with a notice, and the node
// goes on serving others.
func TestPanicFailsTheProcessNotTheNode(t *testing.T) {
	t.Parallel()
	c := newCommits()
	ok := script(t, `turns: [{rounds: [{calls: [{name: respond, args: {message: "ok"}}]}]}]`)
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": panickingModel{}, "scripted": ok},
		OnCommit: c.add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	failed := c.wait(t, "the process to fail", func(r store.Record) bool { return r.ID == rec.ID })
	if failed.Status.State != lifecycle.Failed {
		t.Fatalf("state = %s, want FAILED", failed.Status)
	}
	evs, err := n.Store().Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-2] // the notice, then the state change
	if last.SystemNotice == nil || !strings.Contains(last.SystemNotice.Text, "model bug") {
		t.Fatalf("no failure notice naming the panic: %+v", last)
	}
	// The node still runs turns.
	other, err := n.Create(ctx, NewProcess{Recipe: "calm", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "another process to be served", func(r store.Record) bool { return r.ID == other.ID && r.Status.State == lifecycle.Blocked })
}

// The node keeps the logs of the processes it ran and reads only what is
// new: the model must still see the whole conversation, turn after turn.
func TestKeptHistoryShowsTheWholeConversation(t *testing.T) {
	t.Parallel()
	c := newCommits()
	model := script(t, `
turns:
  - rounds: [{calls: [{name: respond, args: {message: "one"}}]}]
  - rounds: [{calls: [{name: respond, args: {message: "two"}}]}]
  - rounds: [{calls: [{name: respond, args: {message: "three"}}]}]
`)
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	// turns counts the committed turns of the process.
	turns := func() int {
		k := 0
		for _, r := range c.records() {
			if r.ID == rec.ID {
				k++
			}
		}
		return k
	}
	for i, msg := range []string{"second", "third"} {
		c.wait(t, "a turn", func(store.Record) bool { return turns() == i+1 })
		if _, err := n.Send(ctx, rec.ID, "user:ada", msg, ""); err != nil {
			t.Fatal(err)
		}
	}
	c.wait(t, "the third answer", func(store.Record) bool { return turns() == 3 })
	reqs := model.Requests()
	full, err := n.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := reqs[len(reqs)-1].Messages
	// The last request saw everything but the final respond pair.
	want := conversation.ProviderView(full)
	want = want[:len(want)-2]
	if diff := cmp.Diff(want, last); diff != "" {
		t.Fatalf("the third turn's model request differs from the log (-log +request):\n%s", diff)
	}
	// The node kept the turn's own writes too: the next claim reads none of
	// them back.
	if got, want := lastKept(n, rec.ID), full[len(full)-1].ID; got != want {
		t.Errorf("the kept log ends at %s, the log at %s", got, want)
	}
}

// A kept log can be evicted, to make room for another process's, after a
// claim asked only for what follows it: the turn then reads the log back
// (this short one whole) instead of giving up (which left the process to wait for its lease to
// expire).
func TestKeptHistoryEvictedAfterTheClaim(t *testing.T) {
	t.Parallel()
	c := newCommits()
	model := script(t, `
turns:
  - rounds: [{calls: [{name: respond, args: {message: "one"}}]}]
`)
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.add, HistoryCache: 1})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the first turn", func(r store.Record) bool { return r.ID == rec.ID })
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Send(ctx, rec.ID, "user:ada", "second", ""); err != nil {
		t.Fatal(err)
	}
	wakes, err := n.store.ReadWakes(ctx, "n2", []string{"chat"}, 1, time.Millisecond)
	if err != nil || len(wakes) != 1 {
		t.Fatalf("ReadWakes = %v, %v; want the second message's wake", wakes, err)
	}
	known, kept := n.histories.known(rec.ID)
	if known == "" || kept == nil {
		t.Fatalf("the first turn's log (%q) or record (%v) is not kept", known, kept)
	}
	claim, err := n.store.ClaimAfter(ctx, wakes[0], "n2", "t2", known, kept)
	if err != nil {
		t.Fatal(err)
	}
	n.histories.extend("p_other", "", nil) // the cache holds one log: this evicts the process's
	history, omitted, err := n.turnHistory(ctx, claim, kept, 1000)
	if err != nil || omitted {
		t.Fatalf("turnHistory after the kept log was evicted: omitted %v, %v; want the short log whole", omitted, err)
	}
	full, err := n.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full[:len(full)-len(claim.Current)], history); diff != "" {
		t.Errorf("history (-the log before the turn +read):\n%s", diff)
	}
	if got := lastKept(n, rec.ID); got != lastID(history) {
		t.Errorf("kept log ends at %q, want %q: read whole, it is kept again", got, lastID(history))
	}
}

// lastKept is the id of the last event n keeps for process pid.
func lastKept(n *Node, pid string) string {
	id, _ := n.histories.known(pid)
	return id
}

// logged returns a logger for a node, and a channel that receives once the
// node has logged a message starting with prefix.
func logged(prefix string) (*zap.Logger, <-chan struct{}) {
	seen := make(chan struct{}, 1)
	observed, _ := observer.New(zap.InfoLevel) // hooks run only on entries a core takes
	return zap.New(zapcore.RegisterHooks(observed, func(e zapcore.Entry) error {
		if strings.HasPrefix(e.Message, prefix) {
			select {
			case seen <- struct{}{}:
			default:
			}
		}
		return nil
	})), seen
}

// A node deletes, when it starts, the Lua library of a brain version that
// no node has used for store.LibraryRetention, and keeps its own.
func TestNodeDeletesUnusedLibraries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testutil.StartRedis(t).Client(t)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	const old = "brain_00000000000a"
	if err := rdb.FunctionLoad(ctx, "#!lua name="+old+"\nredis.register_function('"+old+"_f', function() return 1 end)").Err(); err != nil {
		t.Fatal(err)
	}
	// The key store.TendLibraries keeps: the last time a node noted old.
	lastUse := now.Add(-store.LibraryRetention - time.Minute)
	if err := rdb.ZAdd(ctx, "brain:libraries", redis.Z{Score: float64(lastUse.UnixMilli()), Member: old}).Err(); err != nil {
		t.Fatal(err)
	}
	logger, deleted := logged("deleted the Lua function library")
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": script(t, delegation)},
		Logger: logger, Clock: func() time.Time { return now }})
	select {
	case <-deleted:
	case <-time.After(10 * time.Second):
		t.Fatal("the node did not delete the unused library")
	}
	if _, err := n.Create(ctx, NewProcess{Recipe: "arthur"}); err != nil { // loads the node's own library
		t.Fatal(err)
	}
	libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{}).Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range libs {
		names = append(names, l.Name)
	}
	if len(names) != 1 || names[0] == old {
		t.Errorf("libraries = %v; want the node's own only", names)
	}
}

// A node with RetainFinished deletes, when it starts, the finished
// processes that have not changed for that long, and keeps the others.
func TestNodeDeletesFinishedProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testutil.StartRedis(t).Client(t)
	clock := &fakeClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	st, err := store.New(rdb, store.Config{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	create := func(pid string, finish bool) string {
		t.Helper()
		if _, err := st.Create(ctx, store.NewProcess{ID: pid, Recipe: "default", Engine: "chat"}); err != nil {
			t.Fatal(err)
		}
		if finish {
			if _, _, err := st.Transition(ctx, pid, lifecycle.Finish, "operator:olga"); err != nil {
				t.Fatal(err)
			}
		}
		return pid
	}
	old := []string{create("p_old_done", true)}
	kept := []string{create("p_old_blocked", false)}
	clock.Add(30 * 24 * time.Hour)
	kept = append(kept, create("p_recent_done", true))
	clock.Add(time.Hour)

	logger, deleted := logged("deleted finished processes")
	startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": script(t, delegation)},
		Logger: logger, Clock: clock.Now, RetainFinished: 30 * 24 * time.Hour})
	select {
	case <-deleted:
	case <-time.After(10 * time.Second):
		t.Fatal("the node deleted no finished process")
	}
	for _, pid := range old {
		if _, err := st.Get(ctx, pid); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s, finished 30 days and an hour ago: %v, want it deleted", pid, err)
		}
	}
	for _, pid := range kept {
		if _, err := st.Get(ctx, pid); err != nil {
			t.Errorf("%s: %v, want it kept", pid, err)
		}
	}
}

// sayHi is a script whose every turn answers "Hi." and waits for the user.
const sayHi = "turns:\n  - rounds:\n      - calls: [{name: respond, args: {message: \"Hi.\", awaiting_user_input: true}}]\n"

// A turn's model_usage names the candidate of a fallback chain that
// answered, not the first one asked.
func TestUsageNamesTheModelThatAnswered(t *testing.T) {
	t.Parallel()
	lib, err := recipes.LoadDir("testdata/recipes")
	if err != nil {
		t.Fatal(err)
	}
	c := newCommits()
	models := map[string]llm.Model{
		"default":  script(t, delegation),
		"down":     failingModel{err: &provider.Error{Provider: "anthropic", Kind: provider.ErrUnavailable, StatusCode: 529}},
		"scripted": llmtest.WithUsage{Model: script(t, sayHi), In: 120, Out: 8},
	}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: models, Recipes: lib, OnCommit: c.add})
	p, err := n.Create(context.Background(), NewProcess{Recipe: "backed-up", Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the answer", func(r store.Record) bool { return r.ID == p.ID && r.Status.State == lifecycle.Blocked })
	evs, err := n.Store().Log(context.Background(), p.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []conversation.ModelUsage
	for _, e := range evs {
		if e.ModelUsage != nil {
			got = append(got, *e.ModelUsage)
		}
	}
	want := []conversation.ModelUsage{{Provider: "scripted", Model: "backup-model", InputTokens: 120, OutputTokens: 8}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model_usage events (-want +got):\n%s", diff)
	}
}

// spendTwoAnswers starts a process of recipe on n, whose model reports 550
// input and 50 output tokens a call, waits for its first two answers, and
// sends it a third message: a 1,000-token budget is spent by then.
func spendTwoAnswers(t *testing.T, n *Node, c *commits, recipe string) store.Record {
	t.Helper()
	ctx := context.Background()
	p, err := n.Create(ctx, NewProcess{Recipe: recipe, Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the first answer", func(r store.Record) bool { return r.ID == p.ID && r.Tokens.Input == 550 })
	if _, err := n.Send(ctx, p.ID, "user:ada", "again", ""); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the second answer", func(r store.Record) bool { return r.ID == p.ID && r.Tokens.Input == 1100 })
	if _, err := n.Send(ctx, p.ID, "user:ada", "and again", ""); err != nil {
		t.Fatal(err)
	}
	return p
}

// A process's model calls stop at its recipe's limits.max_tokens, counted
// across turns by the record: the turn that finds them spent fails without
// calling the model, with a notice.
func TestTokenBudgetAcrossTurns(t *testing.T) {
	t.Parallel()
	c := newCommits()
	model := llmtest.WithUsage{Model: script(t, sayHi), In: 550, Out: 50}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.add})
	ctx := context.Background()
	p := spendTwoAnswers(t, n, c, "frugal") // limits.max_tokens: 1000
	rec := c.wait(t, "the spent budget", func(r store.Record) bool { return r.ID == p.ID && r.Status.State == lifecycle.Failed })
	if rec.Tokens.Input != 1100 || rec.Tokens.Output != 100 {
		t.Errorf("tokens %+v, want the two calls' alone", rec.Tokens)
	}
	evs, err := n.Store().Log(ctx, p.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-2].SystemNotice; last == nil || last.Code != rounds.NoticeTokenBudget {
		t.Errorf("the log ends %s, %s; want a token_budget notice, then the failure", evs[len(evs)-2].Type, evs[len(evs)-1].Type)
	}
}

// A process whose calls used its recipe's limits.max_tokens_per_day makes
// no more that day: the turn that finds them used ends READY with a notice,
// without a model call, and arms a timer for the next 00:00 UTC, whose
// message wakes the process; that day's calls count afresh.
func TestDayTokenBudgetAcrossDays(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)}
	c := newCommits()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	model := llmtest.WithUsage{Model: script(t, sayHi), In: 550, Out: 50}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.add, Clock: clock.Now, Metrics: m})
	ctx := context.Background()
	p := spendTwoAnswers(t, n, c, "daily") // limits.max_tokens_per_day: 1000
	rec := c.wait(t, "the day's spent budget", func(r store.Record) bool { return r.ID == p.ID && r.Status.State == lifecycle.Ready })
	if rec.Tokens.Input != 1100 || rec.Tokens.On(clock.Now()) != 1200 {
		t.Errorf("tokens %+v, want the two calls' alone, on this day", rec.Tokens)
	}
	evs, err := n.Store().Log(ctx, p.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if notice := evs[len(evs)-2].SystemNotice; notice == nil || notice.Code != rounds.NoticeDayTokenBudget {
		t.Errorf("the log ends %s, %s; want a day_token_budget notice, then the change to READY", evs[len(evs)-2].Type, evs[len(evs)-1].Type)
	}
	if got := promtest.ToFloat64(m.daySpent.WithLabelValues("daily")); got != 1 {
		t.Errorf("brain_day_budget_turns_total{recipe=daily} = %v, want 1", got)
	}
	midnight := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	timers, err := n.Timers(ctx, p.ID)
	if err != nil || len(timers) != 1 || !timers[0].Due.Equal(midnight) {
		t.Fatalf("timers %+v, %v; want one due at %s", timers, err, midnight)
	}
	clock.Add(time.Hour) // the node's timer loop fires it
	rec = c.wait(t, "the next day's answer", func(r store.Record) bool { return r.ID == p.ID && r.Tokens.Input == 1650 })
	if got := rec.Tokens.On(clock.Now()); got != 600 || rec.Status.State != lifecycle.Blocked {
		t.Errorf("the next day: %d tokens that day, %s; want 600 and BLOCKED", got, rec.Status)
	}
	in, err := n.Store().Log(ctx, p.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	woken := slices.ContainsFunc(in, func(e conversation.Event) bool {
		return e.InboxMessage != nil && e.InboxMessage.Kind == conversation.KindSchedule && strings.Contains(e.InboxMessage.Content, "token budget")
	})
	if !woken {
		t.Error("no schedule message about the day's budget in the log")
	}
}

// A model's declared context window (llm.Windowed, as brain serve's
// providers declare max_context_tokens) bounds a recipe that sets none;
// with fallbacks, the smallest window does.
func TestModelWindow(t *testing.T) {
	t.Parallel()
	plain := script(t, "turns:\n  - rounds:\n      - text: \"hi\"\n")
	n, err := New(Config{Redis: testutil.Redis(t), Recipes: testRecipes(t), Models: map[string]llm.Model{
		"default": plain,
		"big":     llm.WithContextTokens(plain, 8000),
		"small":   llm.WithContextTokens(plain, 4000),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		m    recipes.Model
		want int
	}{
		{"none declared", recipes.Model{Provider: "default"}, 0},
		{"declared", recipes.Model{Provider: "big"}, 8000},
		{"the smallest of the fallbacks", recipes.Model{Provider: "big", Fallbacks: []recipes.Fallback{{Provider: "default"}, {Provider: "small"}}}, 4000},
	} {
		_, window, err := n.model(&recipes.Recipe{Name: "r", Model: tt.m})
		if err != nil || window != tt.want {
			t.Errorf("%s: window %d, %v; want %d", tt.name, window, err, tt.want)
		}
	}
}

// A turn's model calls are cut to the window its model declares, unless
// the recipe sets its own bound.
func TestModelWindowBoundsTheTurn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		recipe string
		cut    bool
	}{{"ford", true}, {"roomy", false}} {
		t.Run(tt.recipe, func(t *testing.T) {
			t.Parallel()
			model := script(t, `
turns:
  - rounds:
      - calls: [{name: respond, args: {message: "Read it.", awaiting_user_input: true}}]
  - rounds:
      - calls: [{name: respond, args: {message: "Done.", awaiting_user_input: true}}]
`)
			c := newCommits()
			n := startNode(t, Config{Redis: testutil.Redis(t), OnCommit: c.add,
				Models: map[string]llm.Model{"default": llm.WithContextTokens(model, 1000)}})
			p, err := n.Create(context.Background(), NewProcess{Recipe: tt.recipe, Input: strings.Repeat("a long text ", 400)})
			if err != nil {
				t.Fatal(err)
			}
			c.wait(t, "the first answer", func(r store.Record) bool { return r.ID == p.ID && r.Status.State == lifecycle.Blocked })
			if _, err := n.Send(context.Background(), p.ID, "user:alice", "and now?", ""); err != nil {
				t.Fatal(err)
			}
			c.wait(t, "the second answer", func(r store.Record) bool {
				return r.ID == p.ID && r.Status.State == lifecycle.Blocked && r.Version > 3
			})
			reqs := model.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model calls, want 2", len(reqs))
			}
			first := reqs[1].Messages[0].Text()
			if cut := strings.HasPrefix(first, conversation.OmittedNote); cut != tt.cut {
				t.Errorf("the second call begins with %.80q: cut %v, want %v (the model's window is 1000 tokens)", first, cut, tt.cut)
			}
		})
	}
}

// trims signals each pipeline that trimmed a stream (XTRIM), once it is
// done.
type trims chan struct{}

func (trims) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (trims) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (tr trims) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "xtrim" }) {
			select {
			case tr <- struct{}{}:
			default:
			}
		}
		return err
	}
}

// A node trims its wake queues: a turn only acknowledges its wake, and the
// entries every node is done with go soon after.
func TestNodeTrimsWakeQueues(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	trimmed := make(trims, 1)
	rdb.AddHook(trimmed)
	c := newCommits()
	model := script(t, "turns:\n"+strings.Repeat("  - rounds: [{calls: [{name: respond, args: {message: \"ok\"}}]}]\n", 3))
	n := startNode(t, Config{Redis: rdb, Shards: 1, Models: map[string]llm.Model{"default": model}, OnCommit: c.add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	for i, msg := range []string{"second", "third", ""} {
		c.wait(t, "a turn", func(store.Record) bool { return len(c.records()) == i+1 })
		if msg != "" {
			if _, err := n.Send(ctx, rec.ID, "user:ada", msg, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The second trim from now looked at the queue after the last turn.
	for range 2 {
		select {
		case <-trimmed:
		case <-time.After(10 * time.Second):
			t.Fatal("the node trimmed no wake queue")
		}
	}
	left, err := rdb.XLen(ctx, "brain:wake:chat:0").Result()
	if err != nil || left != 0 {
		t.Errorf("the wake queue holds %d entries (%v) after three turns and a trim, want none", left, err)
	}
}

// citing answers as its Model does, with a text citing src first when
// what it is shown mentions mention.
type citing struct {
	llm.Model
	mention string
	src     conversation.Source
}

func (m citing) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	answer := m.Model.Generate(ctx, req)
	if !slices.ContainsFunc(req.Messages, func(msg conversation.Message) bool { return strings.Contains(msg.Text(), m.mention) }) {
		return answer
	}
	return func(yield func(llm.Part, error) bool) {
		if !yield(llm.Part{Kind: llm.PartText, Text: "Counted."}, nil) ||
			!yield(llm.Part{Kind: llm.PartCitation, Citation: &conversation.Citation{Source: m.src}}, nil) {
			return
		}
		for p, err := range answer {
			if !yield(p, err) {
				return
			}
		}
	}
}

// The sources a worker's result cites reach its parent, in the report and
// with the answer the parent then gives its user.
func TestWorkerSourcesReachTheParent(t *testing.T) {
	t.Parallel()
	src := conversation.Source{URL: "https://rows.test/table", Title: "The table"}
	model := citing{Model: script(t, delegation), mention: "TASK:", src: src}
	c := newCommits()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model},
		Recipes: recipes.Builtin(), OnCommit: c.add})
	ctx := context.Background()
	parent, err := n.Create(ctx, NewProcess{Recipe: "arthur", Input: "count the rows", Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })
	evs, err := n.Store().Log(ctx, parent.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var report conversation.ProcessEvent
	var answer *conversation.ToolCallResponse
	for _, e := range evs {
		if m := e.InboxMessage; m != nil {
			if r, ok := m.ProcessEvent(); ok {
				report = r
			}
		}
		if r := e.ToolCallResponse; r != nil && r.Name == "respond" {
			answer = r
		}
	}
	if !slices.Equal(report.Sources, []conversation.Source{src}) {
		t.Errorf("the worker's report cites %+v, want %+v", report.Sources, src)
	}
	if answer == nil || len(answer.Citations) != 1 || answer.Citations[0].Source != src {
		t.Errorf("the parent's last answer is %+v, want one citing %+v", answer, src)
	}
}

// A node outlives a restart of its Redis (an upgrade, say, with the
// append-only file on): a turn running across a restart commits; while
// Redis is down the node's loops fail and say so, and once it is back they
// read wakes again and a message posted then is answered. Every message
// is drained once.
func TestNodeOutlivesARedisRestart(t *testing.T) {
	t.Parallel()
	redisSrv := testutil.StartRedisWith(t, redisserver.Options{AppendOnly: true})
	model := &blockingModel{entered: make(chan struct{}, 1), release: make(chan struct{})}
	c := newCommits()
	log, wakesFailed := logged("wakes failed")
	n := startNode(t, Config{Redis: redisSrv.Client(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.add, Logger: log})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	answered := func(turns int) func(store.Record) bool {
		return func(r store.Record) bool {
			return r.ID == rec.ID && r.Status.State == lifecycle.Blocked && len(c.records()) >= turns
		}
	}
	<-model.entered
	redisSrv.Shutdown(t) // mid-turn: the model is answering
	redisSrv.Relaunch(t)
	close(model.release)
	c.wait(t, "the turn begun before the restart to commit", answered(1))

	redisSrv.Shutdown(t) // idle: the node waits for wakes
	select {
	case <-wakesFailed:
	case <-time.After(waitTimeout):
		t.Fatal("the node never noticed that Redis was gone")
	}
	redisSrv.Relaunch(t)
	if _, err := n.Send(ctx, rec.ID, "", "second", ""); err != nil {
		t.Fatalf("Send after the restart: %v", err)
	}
	c.wait(t, "the message sent after the restart to be answered", answered(2))

	if inbox := drained(t, redisSrv, rec.ID); !slices.Equal(inbox, []string{"first", "second"}) {
		t.Errorf("inbox messages in the log = %q, want first and second, once each", inbox)
	}
}

// drained returns the contents of the inbox messages in pid's log on srv,
// in order.
func drained(t *testing.T, srv *testutil.RedisServer, pid string) []string {
	t.Helper()
	evs, err := redisLog(t, srv, pid)
	if err != nil {
		t.Fatal(err)
	}
	var inbox []string
	for _, e := range evs {
		if e.InboxMessage != nil {
			inbox = append(inbox, e.InboxMessage.Content)
		}
	}
	return inbox
}

// A node that has none of a long log reads back only as much of it as a
// model call can be shown, from a turn's start, and tells the model that
// the beginning is left out; the call shows the newest exchanges, as the
// whole log would.
func TestLongLogIsReadBackToTheWindow(t *testing.T) {
	t.Parallel()
	const turns, window = 120, 20000
	answer := strings.Repeat("All is well. ", 120) // about 500 tokens a turn
	model := script(t, fmt.Sprintf(`
turns:
  - rounds:
      - calls: [{name: respond, args: {message: %q, awaiting_user_input: true}}]
`, answer))
	models := map[string]llm.Model{"default": llm.WithContextTokens(model, window)}
	redisSrv := testutil.StartRedis(t)
	c := newCommits()
	a := startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "a", Models: models, OnCommit: c.add})
	ctx := context.Background()
	rec, err := a.Create(ctx, NewProcess{Recipe: "ford", Input: "question 0"})
	if err != nil {
		t.Fatal(err)
	}
	answered := func(n int) func(store.Record) bool {
		return func(store.Record) bool { return len(c.records()) >= n }
	}
	c.wait(t, "the first answer", answered(1))
	for i := 1; i < turns; i++ {
		if _, err := a.Send(ctx, rec.ID, "user:ada", fmt.Sprint("question ", i), ""); err != nil {
			t.Fatal(err)
		}
		c.wait(t, fmt.Sprint("answer ", i), answered(i+1))
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	b := startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "b", Models: models, OnCommit: c.add})
	if _, err := b.Send(ctx, rec.ID, "user:ada", fmt.Sprint("question ", turns), ""); err != nil {
		t.Fatal(err)
	}
	c.wait(t, "node b's answer", answered(turns+1))

	reqs := model.Requests()
	shown := reqs[len(reqs)-1].Messages
	if len(shown) == 0 || len(shown[0].Content) == 0 || shown[0].Content[0].Text != conversation.OmittedNote {
		t.Fatal("node b's call does not begin with the omitted note")
	}
	var questions []string
	for _, m := range shown {
		if m.Role == conversation.MessageUser {
			questions = append(questions, m.Content[len(m.Content)-1].Text)
		}
	}
	if tokens := conversation.ViewTokens(shown); tokens > window || len(questions) < 20 {
		t.Errorf("node b showed %d tokens and %d questions; want at most %d tokens, 20 questions or more", tokens, len(questions), window)
	}
	for i, q := range questions {
		if want := fmt.Sprint("question ", turns-len(questions)+1+i); q != want {
			t.Fatalf("question %d shown is %q, want %q: the newest exchanges in order", i, q, want)
		}
	}
	full, err := b.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := b.histories.grow(rec.ID, lastKept(b, rec.ID), nil, false)
	t.Logf("kept %d of %d events; showed %d questions, %d tokens; a's last call showed %d messages", len(kept), len(full), len(questions), conversation.ViewTokens(shown), len(reqs[len(reqs)-2].Messages))
	if len(kept) == 0 || len(kept) >= len(full)/2 || kept[0].Type != conversation.TypeTurnStart {
		t.Errorf("node b keeps %d of the log's %d events; want a turn's start and on, less than half", len(kept), len(full))
	}
}

// A node on a Redis watched by Sentinel follows a failover: once the
// replica is promoted, a message is answered there, and the log holds each
// message once.
func TestNodeFollowsASentinelFailover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	master := testutil.StartRedis(t)
	replica := testutil.StartRedisWith(t, redisserver.Options{ReplicaOf: master.Addr})
	sentinel := testutil.StartSentinel(t, master.Addr)
	events := sentinel.Client(t).Subscribe(ctx, "+slave", "+switch-master", "+convert-to-slave")
	t.Cleanup(func() { _ = events.Close() })
	if _, err := events.Receive(ctx); err != nil { // the subscription is in place
		t.Fatal(err)
	}
	// The sentinel learns of the replica from the master, maybe before the
	// subscription: then it lists it already.
	if known, err := sentinel.Client(t).Do(ctx, "SENTINEL", "REPLICAS", redisserver.SentinelMaster).Slice(); err != nil {
		t.Fatal(err)
	} else if len(known) == 0 {
		awaitSentinel(t, events, "+slave")
	}

	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redisserver.SentinelMaster, SentinelAddrs: []string{sentinel.Addr}})
	t.Cleanup(func() { _ = rdb.Close() })
	model := script(t, `
turns:
  - rounds: [{calls: [{name: respond, args: {message: "noted"}}]}]
`)
	c := newCommits()
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, OnCommit: c.add})
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the first answer", func(store.Record) bool { return len(c.records()) >= 1 })
	if got, err := master.Client(t).Do(ctx, "WAIT", 1, 10000).Int(); err != nil || got != 1 {
		t.Fatalf("WAIT for the replica: %d, %v", got, err)
	}

	// The sentinel refuses to fail over (NOGOODSLAVE) until its last word
	// from the replica says the replica is in sync, which it asks for
	// every few seconds.
	deadline := time.Now().Add(waitTimeout)
	for tick := time.NewTicker(100 * time.Millisecond); ; <-tick.C {
		err := sentinel.Client(t).Do(ctx, "SENTINEL", "FAILOVER", redisserver.SentinelMaster).Err()
		if err == nil {
			tick.Stop()
			break
		}
		if !redis.HasErrorPrefix(err, "NOGOODSLAVE") || time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	awaitSentinel(t, events, "+switch-master")
	// Until the old master is made a replica, a client that has not yet
	// heard of the switch still writes there, and Redis loses what it
	// writes (asynchronous replication; Sentinel's documented window).
	// Once it is, such a write is refused; the node's client has switched
	// when it finds a master.
	awaitSentinel(t, events, "+convert-to-slave")
	deadline = time.Now().Add(waitTimeout)
	for tick := time.NewTicker(10 * time.Millisecond); ; <-tick.C {
		role, err := rdb.Do(ctx, "ROLE").Slice()
		if err == nil && len(role) > 0 && role[0] == "master" {
			tick.Stop()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's client found no master after the failover (ROLE %v, %v)", role, err)
		}
	}
	if _, err := n.Send(ctx, rec.ID, "user:ada", "second", ""); err != nil {
		t.Fatalf("Send after the failover: %v", err)
	}
	c.wait(t, "the answer after the failover", func(store.Record) bool { return len(c.records()) >= 2 })

	if inbox := drained(t, replica, rec.ID); !slices.Equal(inbox, []string{"first", "second"}) { // the master now
		t.Errorf("inbox messages in the promoted replica's log = %q, want first and second, once each", inbox)
	}
}

// awaitSentinel waits for a message on the sentinel's channel.
func awaitSentinel(t *testing.T, events *redis.PubSub, channel string) {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		select {
		case m := <-events.Channel():
			if m.Channel == channel {
				return
			}
		case <-timeout:
			t.Fatalf("the sentinel published no %s", channel)
		}
	}
}

// dropScript fails the first pipeline (every one, with all) that runs the
// script whose function name ends with suffix (and, with with, that has it
// among its arguments), after skip such pipelines went through, as a
// dropped connection would: without sending it, or, with sent, once Redis
// has run it (its answer is lost). It closes dropped.
type dropScript struct {
	suffix  string
	with    string
	all     bool
	skip    int32
	sent    bool
	dropped chan struct{}
	once    sync.Once
	seen    atomic.Int32
}

func (*dropScript) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (*dropScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (d *dropScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			args := cmd.Args()
			if len(args) < 2 || !strings.HasSuffix(fmt.Sprint(args[1]), d.suffix) ||
				d.with != "" && !slices.ContainsFunc(args, func(a any) bool { return a == d.with }) {
				continue
			}
			if d.seen.Add(1) <= d.skip {
				break
			}
			drop := d.all
			d.once.Do(func() {
				drop = true
				close(d.dropped)
			})
			if drop {
				if d.sent {
					_ = next(ctx, cmds)
				}
				err := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
		}
		return next(ctx, cmds)
	}
}

// A lease renewal that Redis could not take just now is tried again at the
// next tick, while the lease still has time: the turn goes on and commits
// under its first claim.
func TestUnavailableRenewalKeepsTheTurn(t *testing.T) {
	t.Parallel()
	redisSrv := testutil.StartRedis(t)
	rdb := redisSrv.Client(t)
	drop := &dropScript{suffix: "_renew", dropped: make(chan struct{})}
	rdb.AddHook(drop)
	model := &blockingModel{entered: make(chan struct{}, 1), release: make(chan struct{})}
	c := newCommits()
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, OnCommit: c.add, LeaseTTL: 600 * time.Millisecond})
	rec, err := n.Create(context.Background(), NewProcess{Recipe: "default", Input: "take your time"})
	if err != nil {
		t.Fatal(err)
	}
	<-model.entered
	select {
	case <-drop.dropped:
	case <-time.After(waitTimeout):
		t.Fatal("no renewal was dropped")
	}
	close(model.release)
	done := c.wait(t, "the turn's commit", func(r store.Record) bool { return r.ID == rec.ID })
	if done.Status.State != lifecycle.Blocked {
		t.Errorf("state after the turn = %s, want BLOCKED", done.Status)
	}
	evs, err := redisLog(t, redisSrv, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	answered := false
	for _, e := range evs {
		if e.StateChange != nil && e.StateChange.Event == string(lifecycle.Recover) {
			t.Errorf("the turn was given up and recovered (%+v): one failed renewal cost it its lease", e)
		}
		if e.SystemNotice != nil {
			t.Errorf("the turn ended with a notice (%s: %s), not the model's answer", e.SystemNotice.Code, e.SystemNotice.Text)
		}
		answered = answered || e.ToolCallRequest != nil && e.ToolCallRequest.Name == "respond"
	}
	if !answered {
		t.Error("the model's answer is not in the log")
	}
}

// A lease that cannot be renewed for its whole time to live is given up:
// the turn stops (another node may hold the process by then).
func TestUnrenewableLeaseStopsTheTurn(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	rdb.AddHook(&dropScript{suffix: "_renew", all: true, dropped: make(chan struct{})})
	model := &stoppedModel{stopped: make(chan struct{})}
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, LeaseTTL: 600 * time.Millisecond})
	if _, err := n.Create(context.Background(), NewProcess{Recipe: "default", Input: "take your time"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-model.stopped:
	case <-time.After(waitTimeout):
		t.Fatal("the turn went on without a lease")
	}
}

// stoppedModel answers nothing until its call is cancelled, and then closes
// stopped (once).
type stoppedModel struct {
	stopped chan struct{}
	once    sync.Once
}

func (m *stoppedModel) Generate(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		<-ctx.Done()
		m.once.Do(func() { close(m.stopped) })
		yield(llm.Part{}, ctx.Err())
	}
}

// A claim, a checkpoint or a commit that Redis could not take just now (a
// connection dropped) costs the turn a lease's time, not the process: the
// turn is abandoned, or its wake taken over, and it is recovered from its
// last checkpoint and committed with the model's answer; a dropped
// checkpoint used to fail the process.
func TestUnavailableScriptIsRecovered(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"claim", "checkpoint", "commit"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			model := script(t, `
turns:
  - rounds:
      - calls: [{name: tell_user, args: {message: "Looking."}}]
      - calls: [{name: respond, args: {message: "Found it."}}]
`)
			rdb := testutil.Redis(t)
			drop := &dropScript{suffix: "_" + step, dropped: make(chan struct{})}
			rdb.AddHook(drop)
			c := newCommits()
			n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, OnCommit: c.add, LeaseTTL: 500 * time.Millisecond})
			rec, err := n.Create(context.Background(), NewProcess{Recipe: "default", Input: "find it"})
			if err != nil {
				t.Fatal(err)
			}
			done := c.wait(t, "the turn's commit", func(r store.Record) bool { return r.ID == rec.ID })
			select {
			case <-drop.dropped:
			default:
				t.Fatalf("no %s was dropped", step)
			}
			if done.Status.State != lifecycle.Blocked {
				t.Errorf("after a dropped %s: %s, want BLOCKED (the turn recovered and answered)", step, done.Status)
			}
		})
	}
}

// A create repeated with its idempotency key returns the process the first
// made; the key is the owner's, and a key used for another recipe is
// refused.
func TestIdempotentCreate(t *testing.T) {
	t.Parallel()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": script(t, "turns: [{rounds: [{text: hi}]}]")}})
	ctx := context.Background()
	create := func(owner, recipe, key string) (store.Record, error) {
		return n.Create(ctx, NewProcess{Recipe: recipe, Owner: owner, IdempotencyKey: key})
	}
	first, err := create("ada", "default", "k1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := create("ada", "default", "k1")
	if err != nil || again.ID != first.ID {
		t.Errorf("the create repeated: %s, %v; want %s, the first's", again.ID, err, first.ID)
	}
	other, err := create("bob", "default", "k1")
	if err != nil || other.ID == first.ID {
		t.Errorf("another owner's create with the same key: %s, %v; want a process of its own", other.ID, err)
	}
	if _, err := create("ada", "ford", "k1"); !errors.Is(err, ErrIdempotencyKeyReused) {
		t.Errorf("the key again for another recipe: %v, want ErrIdempotencyKeyReused", err)
	}
	fresh, err := create("ada", "default", "")
	if err != nil || fresh.ID == first.ID {
		t.Errorf("a create without a key: %s, %v; want a new process", fresh.ID, err)
	}
	if recs, _, err := n.ListOwned(ctx, "ada", "", "", 10); err != nil || len(recs) != 2 {
		t.Errorf("ada's processes: %d, %v; want 2", len(recs), err)
	}
}

// A recipe's limits.max_log_events bounds what a process's log keeps in
// Redis: each commit trims the oldest events; the model is told the
// beginning is left out and is shown whole turns; and a node whose kept log
// another node's commit trimmed past reads the log back, rather than
// joining its kept events to what is left with a gap between.
func TestLogIsTrimmedToTheRecipe(t *testing.T) {
	t.Parallel()
	const keep = 100 // testdata/recipes/brief.yaml
	model := script(t, `
turns:
  - rounds:
      - calls: [{name: tell_user, args: {message: "Looking."}}]
      - calls: [{name: respond, args: {message: "Found it.", awaiting_user_input: true}}]
`)
	models := map[string]llm.Model{"default": model}
	redisSrv := testutil.StartRedis(t)
	c := newCommits()
	ctx := context.Background()
	start := func(id string) *Node {
		return startNode(t, Config{Redis: redisSrv.Client(t), NodeID: id, Models: models, Recipes: testRecipes(t), OnCommit: c.add})
	}
	a := start("a")
	rec, err := a.Create(ctx, NewProcess{Recipe: "brief", Input: "question 0"})
	if err != nil {
		t.Fatal(err)
	}
	asked := 1
	ask := func(n *Node, until func(store.Record) bool) {
		t.Helper()
		for {
			c.wait(t, fmt.Sprint("answer ", asked-1), func(store.Record) bool { return len(c.records()) >= asked })
			if recs := c.records(); until(recs[len(recs)-1]) {
				return
			}
			if _, err := n.Send(ctx, rec.ID, "user:ada", fmt.Sprint("question ", asked), ""); err != nil {
				t.Fatal(err)
			}
			asked++
		}
	}
	// Node a until its commits trimmed the log, and once more: it keeps the
	// log of a turn that did not trim.
	ask(a, func(r store.Record) bool { return r.Trimmed > 0 })
	ask(a, func(r store.Record) bool { return lastKept(a, rec.ID) != "" })
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	known, kept := a.histories.known(rec.ID)
	if kept == nil {
		t.Fatal("node a keeps no record with its log")
	}

	// Node b until the log no longer holds what node a kept last.
	b := start("b")
	ask(b, func(store.Record) bool {
		first, err := b.Log(ctx, rec.ID, "", 1)
		return err == nil && len(first) == 1 && first[0].ID > known
	})
	log, err := b.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := c.records()[len(c.records())-1]
	if len(log) < keep || len(log) > 2*keep || last.Trimmed == 0 {
		t.Errorf("after %d turns the log holds %d events, %d trimmed; want at least %d, not many more", asked, len(log), last.Trimmed, keep)
	}
	if k, _ := b.histories.grow(rec.ID, lastKept(b, rec.ID), nil, false); len(k) > 0 && k[0].ID < log[0].ID {
		t.Errorf("node b keeps the event %s, trimmed from the log", k[0].ID)
	}
	reqs := model.Requests()
	shown := reqs[len(reqs)-1].Messages
	if len(shown) == 0 || len(shown[0].Content) < 2 || shown[0].Content[0].Text != conversation.OmittedNote ||
		!strings.HasPrefix(shown[0].Content[1].Text, "question ") {
		t.Fatalf("node b's last call does not begin with the omitted note and a question (a whole turn): %+v", shown[:min(1, len(shown))])
	}
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// Node a's next turn, with the log it kept: read back, not joined.
	if _, err := b.Send(ctx, rec.ID, "user:ada", "once more", ""); err != nil {
		t.Fatal(err)
	}
	wakes, err := a.store.ReadWakes(ctx, "a", []string{"chat"}, 1, time.Millisecond)
	if err != nil || len(wakes) != 1 {
		t.Fatalf("ReadWakes = %v, %v; want the message's wake", wakes, err)
	}
	claim, err := a.store.ClaimAfter(ctx, wakes[0], "a", "", known, kept)
	if err != nil {
		t.Fatal(err)
	}
	history, omitted, err := a.turnHistory(ctx, claim, kept, 100000)
	if err != nil || !omitted {
		t.Fatalf("node a's history: omitted %v, %v; want the trimmed log, omitted", omitted, err)
	}
	if len(history) == 0 || history[0].Type != conversation.TypeTurnStart || history[0].ID < log[0].ID {
		t.Errorf("node a's history starts with %s %s; want a turn's start in the log as it is (from %s)",
			history[0].Type, history[0].ID, log[0].ID)
	}
	if err := a.store.Release(ctx, claim); err != nil {
		t.Fatal(err)
	}
}

// The node's MaxLogEvents bounds the logs of processes whose recipe sets
// no limits.max_log_events; a recipe's own bound wins.
func TestNodeMaxLogEvents(t *testing.T) {
	t.Parallel()
	model := script(t, `
turns:
  - rounds:
      - calls: [{name: tell_user, args: {message: "Looking."}}]
      - calls: [{name: respond, args: {message: "Found it.", awaiting_user_input: true}}]
`)
	c := newCommits()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Recipes: testRecipes(t),
		MaxLogEvents: 150, OnCommit: c.add})
	ctx := context.Background()
	last := make(map[string]store.Record)
	var pids []string
	for _, recipe := range []string{"default", "brief"} { // brief keeps 100
		rec, err := n.Create(ctx, NewProcess{Recipe: recipe, Input: "question"})
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, rec.ID)
	}
	for turn := 0; last[pids[0]].Trimmed == 0 || last[pids[1]].Trimmed == 0; turn++ {
		if turn == 100 {
			t.Fatalf("after %d turns: %d and %d events trimmed; want both logs trimmed", turn, last[pids[0]].Trimmed, last[pids[1]].Trimmed)
		}
		for _, pid := range pids {
			if turn > 0 {
				if _, err := n.Send(ctx, pid, "user:ada", "again", ""); err != nil {
					t.Fatal(err)
				}
			}
			want := last[pid].Version + 1
			c.wait(t, "an answer", func(r store.Record) bool {
				if r.ID == pid && r.Status.State == lifecycle.Blocked && r.Version > want {
					last[pid] = r
					return true
				}
				return false
			})
		}
	}
	for i, bounds := range [][2]int{{150, 200}, {100, 150}} {
		log, err := n.Log(ctx, pids[i], "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) < bounds[0] || len(log) >= bounds[1] {
			t.Errorf("the log of a process of %s holds %d events; want %d or more, fewer than %d", last[pids[i]].Recipe, len(log), bounds[0], bounds[1])
		}
	}
}

// A spawn_worker call whose node lost Redis after the worker was made but
// before the call's result was saved is run again when the turn is
// recovered, under the same call key: it finds the worker the first run
// made, so the parent has one worker and is told its id, not that the
// call may or may not have run. So does a spawn whose create's answer was
// lost, which Spawn tries again.
func TestRecoveredSpawnFindsItsWorker(t *testing.T) {
	t.Parallel()
	for name, drop := range map[string]*dropScript{
		// The parent's second checkpoint holds the spawn's result (the
		// first, its request).
		"the result's checkpoint dropped": {suffix: "_checkpoint", skip: 1},
		// The worker's create is made but its answer is lost: Spawn tries
		// it again.
		"the create's answer lost": {suffix: "_create", with: "marvin-worker", sent: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			drop.dropped = make(chan struct{})
			spawnOnce(t, drop)
		})
	}
}

// spawnOnce runs a delegation through a Redis client with drop and checks
// that the parent started one worker and was told its id.
func spawnOnce(t *testing.T, drop *dropScript) {
	rdb := testutil.Redis(t)
	rdb.AddHook(drop)
	n, parent := delegating(t, Config{Redis: rdb, LeaseTTL: 500 * time.Millisecond},
		func(r store.Record) bool { return r.Status.State == lifecycle.Blocked })
	ctx := context.Background()
	select {
	case <-drop.dropped:
	default:
		t.Fatal("no checkpoint was dropped")
	}
	workers, _, err := n.ListWorkers(ctx, parent.ID, "", "", 10)
	if err != nil || len(workers) != 1 {
		t.Fatalf("the parent's workers: %d, %v; want one", len(workers), err)
	}
	results := toolResults(t, n, parent.ID, tools.SpawnWorker)
	if len(results) != 1 || !strings.HasPrefix(results[0], "Started worker "+workers[0].ID+" ") {
		t.Errorf("spawn_worker results in the parent's log: %q; want one, starting worker %s", results, workers[0].ID)
	}
}

// A schedule_wakeup call whose node lost Redis before its result was
// saved is run again when the turn is recovered, under the same call key:
// it arms the same timer, so the process has one, and the model is told
// its id.
func TestRecoveredScheduleArmsOneTimer(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	// The second checkpoint holds the call's result (the first, its
	// request).
	drop := &dropScript{suffix: "_checkpoint", skip: 1, dropped: make(chan struct{})}
	rdb.AddHook(drop)
	model := script(t, `
turns:
  - rounds:
      - calls: [{name: schedule_wakeup, args: {in: 1h, message: "check the build"}}]
      - calls: [{name: respond, args: {message: "I will look in an hour."}}]
`)
	c := newCommits()
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, Recipes: testRecipes(t),
		OnCommit: c.add, LeaseTTL: 500 * time.Millisecond})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "scheduler", Input: "remind me"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the answer", func(r store.Record) bool { return r.ID == rec.ID && r.Status.State == lifecycle.Blocked })
	select {
	case <-drop.dropped:
	default:
		t.Fatal("no checkpoint was dropped")
	}
	timers, err := n.Timers(ctx, rec.ID)
	if err != nil || len(timers) != 1 {
		t.Fatalf("timers: %+v, %v; want one", timers, err)
	}
	results := toolResults(t, n, rec.ID, tools.ScheduleWakeup)
	if len(results) != 1 || !strings.HasPrefix(results[0], "Wakeup "+timers[0].ID+" scheduled") {
		t.Errorf("schedule_wakeup results: %q; want one naming timer %s", results, timers[0].ID)
	}
}

// A schedule_wakeup made again under its call key once its one-shot timer
// has fired does not arm it again, and says so; a cancel_wakeup made again
// says the timer is not scheduled.
func TestScheduleAgainAfterTheTimerFired(t *testing.T) {
	t.Parallel()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": script(t, "turns: [{rounds: [{text: hi}]}]")}})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default"})
	if err != nil {
		t.Fatal(err)
	}
	caller := tools.Caller{ProcessID: rec.ID, CallKey: "t_1/0"}
	w := tools.Wakeup{In: time.Hour, Message: "check"}
	id, _, err := n.ScheduleWakeup(ctx, caller, w)
	if err != nil {
		t.Fatal(err)
	}
	if again, _, err := n.ScheduleWakeup(ctx, caller, w); err != nil || again != id {
		t.Fatalf("ScheduleWakeup again before it fired: %s, %v; want %s again", again, err, id)
	}
	timers, err := n.Timers(ctx, rec.ID)
	if err != nil || len(timers) != 1 {
		t.Fatalf("timers: %+v, %v; want one", timers, err)
	}
	if fired, err := n.Store().FireTimer(ctx, timers[0], time.Time{}); err != nil || !fired {
		t.Fatalf("FireTimer = %v, %v", fired, err)
	}
	again, _, err := n.ScheduleWakeup(ctx, caller, w)
	if !errors.Is(err, tools.ErrWakeupFired) || again != id {
		t.Errorf("ScheduleWakeup again after it fired: %s, %v; want %s, ErrWakeupFired", again, err, id)
	}
	if timers, _ := n.Timers(ctx, rec.ID); len(timers) != 0 {
		t.Errorf("timers after it fired and was scheduled again: %+v, want none", timers)
	}
	other, _, err := n.ScheduleWakeup(ctx, tools.Caller{ProcessID: rec.ID, CallKey: "t_1/1"}, w)
	if err != nil || other == id {
		t.Fatalf("ScheduleWakeup under another call key: %s, %v; want another timer", other, err)
	}
	// cancel_wakeup made again: the timer is gone, and the answer says so.
	if err := n.CancelWakeup(ctx, caller, other); err != nil {
		t.Fatal(err)
	}
	if err := n.CancelWakeup(ctx, caller, other); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "wakeup "+other+" is not scheduled: it was cancelled") {
		t.Errorf("CancelWakeup again: %v; want ErrNotFound, saying it is not scheduled", err)
	}
}

// A spawn_worker beyond the owner's process limit is refused, and the
// model is told why and what to do instead.
func TestSpawnBeyondTheOwnerLimit(t *testing.T) {
	t.Parallel()
	n, parent := delegating(t, Config{Redis: testutil.Redis(t), OwnerLimit: 1}, func(store.Record) bool { return true })
	ctx := context.Background()
	results := toolResults(t, n, parent.ID, tools.SpawnWorker)
	if len(results) != 1 || !strings.Contains(results[0], "spawn_worker refused: the user this process works for has the most processes the server allows (1;") {
		t.Errorf("spawn_worker errors: %q; want the refusal, saying the limit", results)
	}
	if workers, _, err := n.ListWorkers(ctx, parent.ID, "", "", 10); err != nil || len(workers) != 0 {
		t.Errorf("workers: %d, %v; want none", len(workers), err)
	}
}

// A node with WaitReplicas answers writes once the replicas have them: the
// turn's commit is on the replica when the node reports it. With more
// replicas asked for than there are, a create fails as when Redis is
// unavailable, though the master made it.
func TestNodeWaitsForReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	master := testutil.StartRedis(t)
	replica := testutil.StartReplica(t, master)
	rdb := master.Client(t)
	model := script(t, `
turns:
  - rounds: [{calls: [{name: respond, args: {message: "noted"}}]}]
`)
	committed := make(chan store.Record, 1)
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, WaitReplicas: 1,
		OnCommit: func(rec store.Record, _ []conversation.Event) { committed <- rec }})
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-committed:
	case <-time.After(waitTimeout):
		t.Fatal("no turn committed")
	}
	if state, err := replica.Client(t).HGet(ctx, "brain:{"+rec.ID+"}:proc", "state").Result(); err != nil || state != "BLOCKED" {
		t.Errorf("the process on the replica once committed: %q, %v; want BLOCKED", state, err)
	}

	greedy, err := New(Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, WaitReplicas: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := greedy.Create(ctx, NewProcess{Recipe: "default"}); !errors.Is(err, store.ErrNotReplicated) || !store.Unavailable(err) {
		t.Errorf("a create with one replica of two: %v; want ErrNotReplicated", err)
	}
}

// A spawn whose every create loses its answer (Redis made it each time)
// gives up after its tries, telling the model the worker may or may not
// have started; the tries made one worker, under one key.
func TestSpawnThatCannotBeConfirmed(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	drop := &dropScript{suffix: "_create", with: "marvin-worker", sent: true, all: true, dropped: make(chan struct{})}
	rdb.AddHook(drop)
	n, parent := delegating(t, Config{Redis: rdb}, func(store.Record) bool { return true })
	ctx := context.Background()
	results := toolResults(t, n, parent.ID, tools.SpawnWorker)
	if len(results) != 1 || !strings.Contains(results[0], "the worker may or may not have been started") {
		t.Errorf("spawn_worker results: %q; want one saying the worker may or may not have started", results)
	}
	if workers, _, err := n.ListWorkers(ctx, parent.ID, "", "", 10); err != nil || len(workers) != 1 {
		t.Errorf("workers: %d, %v; want the one the tries made", len(workers), err)
	}
}

// toolResults returns the texts of the results of tool in the log of
// process pid, in order.
func toolResults(t *testing.T, n *Node, pid, tool string) []string {
	t.Helper()
	evs, err := n.Store().Log(context.Background(), pid, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, e := range evs {
		if r := e.ToolCallResponse; r != nil && r.Name == tool {
			results = append(results, conversation.TextOf(r.Content))
		}
	}
	return results
}

// Trimmed logs across nodes that keep them: processes whose recipe keeps
// 100 events take their turns on any of three nodes, so a node's kept log
// is often older than the log's last trim. Every model call must still be
// shown its process's messages in order, without a gap or a repeat, and
// each message must be in the log once.
func TestTrimmedLogsAcrossNodes(t *testing.T) {
	t.Parallel()
	const processes, messages = 4, 30
	model := script(t, `
turns:
  - rounds:
      - calls: [{name: tell_user, args: {message: "Looking."}}]
      - calls: [{name: respond, args: {message: "Found it.", awaiting_user_input: true}}]
`)
	redisSrv := testutil.StartRedis(t)
	c := newCommits()
	// Without wake affinity, so that the processes' turns move between the
	// nodes, which then keep stale logs.
	for _, id := range []string{"a", "b", "c"} {
		startNode(t, Config{Redis: redisSrv.Client(t), NodeID: id, Models: map[string]llm.Model{"default": model},
			OnCommit: c.add, Concurrency: 2, AffinityWait: -1})
	}
	n := startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "d", Models: map[string]llm.Model{"default": model}, OnCommit: c.add,
		AffinityWait: -1})
	ctx := context.Background()
	pids := make([]string, processes)
	for p := range pids {
		rec, err := n.Create(ctx, NewProcess{Recipe: "brief", Input: fmt.Sprintf("p%d message 0", p)})
		if err != nil {
			t.Fatal(err)
		}
		pids[p] = rec.ID
	}
	answered := func(pid string, turns int) func(store.Record) bool {
		return func(store.Record) bool {
			k := 0
			for _, r := range c.records() {
				if r.ID == pid {
					k++
				}
			}
			return k >= turns
		}
	}
	for i := 1; i <= messages; i++ {
		for p, pid := range pids {
			c.wait(t, fmt.Sprintf("p%d's answer %d", p, i-1), answered(pid, i))
			if _, err := n.Send(ctx, pid, "user:ada", fmt.Sprintf("p%d message %d", p, i), ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, pid := range pids {
		c.wait(t, "the last answers", answered(pid, messages+1))
	}

	trimmed := 0
	for p, pid := range pids {
		rec, err := n.Get(ctx, pid)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Trimmed > 0 {
			trimmed++
		}
		seen := map[string]bool{}
		for _, e := range mustLog(t, n, pid) {
			if m := e.InboxMessage; m != nil {
				if seen[m.Content] {
					t.Errorf("p%d: %q twice in the log", p, m.Content)
				}
				seen[m.Content] = true
			}
		}
	}
	if trimmed == 0 {
		t.Fatal("no log was trimmed: the test shows nothing")
	}
	for k, req := range model.Requests() {
		var shown []int
		proc := -1
		for _, m := range req.Messages {
			if m.Role != conversation.MessageUser {
				continue
			}
			for _, b := range m.Content {
				var p, i int
				if _, err := fmt.Sscanf(b.Text, "p%d message %d", &p, &i); err == nil {
					if proc >= 0 && p != proc {
						t.Fatalf("call %d shows messages of p%d and p%d", k, proc, p)
					}
					proc = p
					shown = append(shown, i)
				}
			}
		}
		for j := 1; j < len(shown); j++ {
			if shown[j] != shown[j-1]+1 {
				t.Fatalf("call %d (p%d) shows messages %v: a gap or a repeat", k, proc, shown)
			}
		}
	}
}

// mustLog returns the whole log of process pid.
func mustLog(t *testing.T, n *Node, pid string) []conversation.Event {
	t.Helper()
	evs, err := n.Log(context.Background(), pid, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// delegating starts a node with cfg that plays the delegation script with
// the built-in recipes, creates ada's arthur process with a task for a
// worker, and waits until one of its commits satisfies until.
func delegating(t *testing.T, cfg Config, until func(store.Record) bool) (*Node, store.Record) {
	t.Helper()
	c := newCommits()
	cfg.Models, cfg.Recipes, cfg.OnCommit = map[string]llm.Model{"default": script(t, delegation)}, recipes.Builtin(), c.add
	n := startNode(t, cfg)
	parent, err := n.Create(context.Background(), NewProcess{Recipe: "arthur", Input: "count the rows", Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the parent's turn", func(r store.Record) bool { return r.ID == parent.ID && until(r) })
	return n, parent
}

// Stopping a node closes its MCP connections, stopping their processes.
func TestStopClosesMCP(t *testing.T) {
	t.Parallel()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": script(t, "turns: [{rounds: [{calls: [{name: respond, args: {message: hi}}]}]}]")}})
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := n.mcp.Tools(context.Background(), mcp.Server{Name: "x", Command: "x"}, nil); !errors.Is(err, mcp.ErrClosed) {
		t.Errorf("MCP pool after Stop: %v; want ErrClosed", err)
	}
}
