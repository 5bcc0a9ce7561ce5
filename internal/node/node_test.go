package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// TestMain fails the package's tests when one leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testutil.IgnoreRedisRedial) }

// A node limited to some engines never takes a wake of another: the
// worker's wake waits for a node that runs workers.
func TestEnginesPartitionWakes(t *testing.T) {
	t.Parallel()
	redisSrv := testutil.StartRedis(t)
	models := map[string]llm.Model{"default": nodetest.Script(t, delegation)}
	chatCommits, workerCommits := nodetest.NewCommits(), nodetest.NewCommits()
	chatNode := startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "chat", Engines: []string{"chat"},
		Models: models, Recipes: recipes.Builtin(), OnCommit: chatCommits.Add})
	ctx := context.Background()
	parent, err := chatNode.Create(ctx, NewProcess{Recipe: "arthur", Input: "count the rows"})
	if err != nil {
		t.Fatal(err)
	}
	chatCommits.Wait(t, "the parent to go READY", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Ready })

	startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "worker", Engines: []string{"worker"},
		Models: models, Recipes: recipes.Builtin(), OnCommit: workerCommits.Add})
	workerCommits.Wait(t, "the worker to finish", func(r store.Record) bool { return r.Parent == parent.ID && r.Status.State == lifecycle.Done })
	chatCommits.Wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })

	for _, r := range chatCommits.Records() {
		if r.Engine != "chat" {
			t.Errorf("the chat node ran a %s process (%s)", r.Engine, r.ID)
		}
	}
	for _, r := range workerCommits.Records() {
		if r.Engine != "worker" {
			t.Errorf("the worker node ran a %s process (%s)", r.Engine, r.ID)
		}
	}
}

// A node's inbox limit: a timer ticking into a full inbox drops its tick
// and moves on; a user message still wakes the BLOCKED process; one more
// is refused while the process has not read them. Both are counted.
func TestInboxLimitAtTheNode(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC))
	m := NewMetrics(prometheus.NewPedanticRegistry())
	n, err := New(Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": nodetest.Script(t, delegation)},
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

// A panic inside a turn fails that process, with a notice, and the node
// goes on serving others.
func TestPanicFailsTheProcessNotTheNode(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCommits()
	ok := nodetest.Script(t, `turns: [{rounds: [{calls: [{name: respond, args: {message: "ok"}}]}]}]`)
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": nodetest.PanickingModel{}, "scripted": ok},
		OnCommit: c.Add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	failed := c.Wait(t, "the process to fail", func(r store.Record) bool { return r.ID == rec.ID })
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
	c.Wait(t, "another process to be served", func(r store.Record) bool { return r.ID == other.ID && r.Status.State == lifecycle.Blocked })
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
	logger, deleted := nodetest.Logged("deleted the Lua function library")
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": nodetest.Script(t, delegation)},
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
	clock := nodetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
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

	logger, deleted := nodetest.Logged("deleted finished processes")
	startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": nodetest.Script(t, delegation)},
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

// A node trims its wake queues: a turn only acknowledges its wake, and the
// entries every node is done with go soon after.
func TestNodeTrimsWakeQueues(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	trimmed := make(nodetest.Trims, 1)
	rdb.AddHook(trimmed)
	c := nodetest.NewCommits()
	model := nodetest.Script(t, "turns:\n"+strings.Repeat("  - rounds: [{calls: [{name: respond, args: {message: \"ok\"}}]}]\n", 3))
	n := startNode(t, Config{Redis: rdb, Partitions: 1, Models: map[string]llm.Model{"default": model}, OnCommit: c.Add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	for i, msg := range []string{"second", "third", ""} {
		c.Wait(t, "a turn", func(store.Record) bool { return len(c.Records()) == i+1 })
		if msg != "" {
			if _, err := n.Send(ctx, rec.ID, "user:ada", msg, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A trim that starts after the last turn empties the queue. Which
	// trim that is cannot be told from here (a node trims its engines'
	// streams at once, in as many pipelines as the batcher makes), so each
	// trim is followed by a look, until the queue is empty.
	guard := time.After(10 * time.Second)
	for {
		select {
		case <-trimmed:
		case <-guard:
			left, err := rdb.XLen(ctx, store.WakeStream(1, 0, "chat")).Result()
			t.Fatalf("the wake queue holds %d entries (%v) after three turns and 10 s of trims, want none", left, err)
		}
		left, err := rdb.XLen(ctx, store.WakeStream(1, 0, "chat")).Result()
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
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
	model := nodetest.Script(t, `
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
	case <-time.After(nodetest.WaitTimeout):
		t.Fatal("no turn committed")
	}
	if state, err := replica.Client(t).HGet(ctx, store.Key(store.DefaultPartitions, rec.ID, "proc"), "state").Result(); err != nil || state != "BLOCKED" {
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
