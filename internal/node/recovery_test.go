package node

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

// A node dies in the middle of a turn, after one tool ran and while another
// runs. A second node takes over after the lease TTL: the finished tool is
// not run again, the unfinished call gets the orphan result, the message
// is in the log exactly once, and the turn completes.
func TestRecoveryAfterANodeDies(t *testing.T) {
	t.Parallel()
	onEveryDeployment(t, testRecoveryAfterANodeDies)
}

func testRecoveryAfterANodeDies(t *testing.T, d deployment) {
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
	model := nodetest.Script(t, fmt.Sprintf(`
turns:
  - rounds:
      - calls:
          - {name: http_fetch, args: {url: "%[1]s/step"}}
          - {name: http_fetch, args: {url: "%[1]s/hang"}}
      - calls:
          - {name: respond, args: {message: "Recovered."}}
`, srv.URL))
	models := map[string]llm.Model{"default": model}
	const ttl = 600 * time.Millisecond

	clientA := d.client(t)
	a := startNode(t, Config{Redis: clientA, NodeID: "a", Models: models, LeaseTTL: ttl})
	ctx := context.Background()
	rec, err := a.Create(ctx, NewProcess{Recipe: "fetcher", Input: "fetch both"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-hanging:
	case <-time.After(nodetest.WaitTimeout):
		t.Fatal("node a never reached the second tool")
	}
	// Node a dies: it loses Redis and can neither renew nor write.
	_ = clientA.Close()

	c := nodetest.NewCommits()
	startNode(t, Config{Redis: d.client(t), NodeID: "b", Models: models, LeaseTTL: ttl, OnCommit: c.Add})
	done := c.Wait(t, "node b to finish the turn", func(r store.Record) bool { return r.ID == rec.ID })
	if done.Status.State != lifecycle.Blocked {
		t.Fatalf("state after recovery = %s, want BLOCKED", done.Status)
	}
	if s, h := stepHits.Load(), hangHits.Load(); s != 1 || h != 1 {
		t.Errorf("tool runs: step %d, hang %d; want each once", s, h)
	}
	evs := d.log(t, rec.ID)
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
	model := nodetest.Script(t, fmt.Sprintf(`
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
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: rdb, NodeID: "a", Models: map[string]llm.Model{"default": model}, LeaseTTL: ttl, OnCommit: c.Add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "fetcher", Input: "fetch it"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-hanging:
	case <-time.After(nodetest.WaitTimeout):
		t.Fatal("the turn never reached its tool")
	}
	// Four renewals: the lease's time to live goes up four times, and the
	// lease stays the first claim's all along.
	lease := store.Key(store.DefaultPartitions, rec.ID, "lease")
	first, err := rdb.Get(ctx, lease).Result()
	if err != nil {
		t.Fatal(err)
	}
	renewals, last := 0, time.Duration(0)
	deadline := time.Now().Add(nodetest.WaitTimeout)
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
		t.Fatalf("saw %d renewals in %s, want 4", renewals, nodetest.WaitTimeout)
	}
	release <- struct{}{}
	done := c.Wait(t, "the long turn's commit", func(r store.Record) bool { return r.ID == rec.ID })
	if done.Status.State != lifecycle.Blocked {
		t.Errorf("state after the turn = %s, want BLOCKED", done.Status)
	}
	evs, err := nodetest.RedisLog(t, redisSrv, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.StateChange != nil && e.StateChange.Event == string(lifecycle.Recover) {
			t.Errorf("the turn was recovered (%+v): its lease was not kept", e)
		}
	}
}

// Four nodes share the work of many processes while nodes stop and start:
// every message is drained exactly once, no process ever runs on two nodes
// at once, and every process ends BLOCKED with an empty inbox.
func TestLoadWithNodesComingAndGoing(t *testing.T) {
	t.Parallel()
	onEveryDeployment(t, testLoadWithNodesComingAndGoing)
}

func testLoadWithNodesComingAndGoing(t *testing.T, d deployment) {
	procs, msgs := 200, 10
	if testing.Short() {
		procs, msgs = 40, 5
	}
	model := &nodetest.Exclusive{Model: nodetest.Script(t, `turns: [{rounds: [{calls: [{name: respond, args: {message: "ok"}}]}]}]`)}
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
		n, err := New(Config{Redis: d.client(t), NodeID: fmt.Sprintf("n%d", i), Models: models,
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

	deadline := time.NewTimer(nodetest.WaitTimeout)
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
	st, err := store.New(d.client(t), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		nodetest.WaitState(t, st, pid, lifecycle.Blocked, progress)
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
	if o := model.Overlaps(); o != 0 {
		t.Fatalf("%d times a process ran on two nodes at once", o)
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
	model := nodetest.NewBlockingModel()
	c := nodetest.NewCommits()
	log, wakesFailed := nodetest.Logged("wakes failed")
	n := startNode(t, Config{Redis: redisSrv.Client(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.Add, Logger: log})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	answered := func(turns int) func(store.Record) bool {
		return func(r store.Record) bool {
			return r.ID == rec.ID && r.Status.State == lifecycle.Blocked && len(c.Records()) >= turns
		}
	}
	<-model.Entered
	redisSrv.Shutdown(t) // mid-turn: the model is answering
	redisSrv.Relaunch(t)
	close(model.Release)
	c.Wait(t, "the turn begun before the restart to commit", answered(1))

	redisSrv.Shutdown(t) // idle: the node waits for wakes
	select {
	case <-wakesFailed:
	case <-time.After(nodetest.WaitTimeout):
		t.Fatal("the node never noticed that Redis was gone")
	}
	redisSrv.Relaunch(t)
	if _, err := n.Send(ctx, rec.ID, "", "second", ""); err != nil {
		t.Fatalf("Send after the restart: %v", err)
	}
	c.Wait(t, "the message sent after the restart to be answered", answered(2))

	if inbox := nodetest.Drained(t, redisSrv, rec.ID); !slices.Equal(inbox, []string{"first", "second"}) {
		t.Errorf("inbox messages in the log = %q, want first and second, once each", inbox)
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
		nodetest.AwaitSentinel(t, events, "+slave")
	}

	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redisserver.SentinelMaster, SentinelAddrs: []string{sentinel.Addr}})
	t.Cleanup(func() { _ = rdb.Close() })
	model := nodetest.Script(t, `
turns:
  - rounds: [{calls: [{name: respond, args: {message: "noted"}}]}]
`)
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, OnCommit: c.Add})
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the first answer", func(store.Record) bool { return len(c.Records()) >= 1 })
	if got, err := master.Client(t).Do(ctx, "WAIT", 1, 10000).Int(); err != nil || got != 1 {
		t.Fatalf("WAIT for the replica: %d, %v", got, err)
	}

	// The sentinel refuses to fail over (NOGOODSLAVE) until its last word
	// from the replica says the replica is in sync, which it asks for
	// every few seconds.
	deadline := time.Now().Add(nodetest.WaitTimeout)
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
	nodetest.AwaitSentinel(t, events, "+switch-master")
	// Until the old master is made a replica, a client that has not yet
	// heard of the switch still writes there, and Redis loses what it
	// writes (asynchronous replication; Sentinel's documented window).
	// Once it is, such a write is refused; the node's client has switched
	// when it finds a master.
	nodetest.AwaitSentinel(t, events, "+convert-to-slave")
	deadline = time.Now().Add(nodetest.WaitTimeout)
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
	c.Wait(t, "the answer after the failover", func(store.Record) bool { return len(c.Records()) >= 2 })

	if inbox := nodetest.Drained(t, replica, rec.ID); !slices.Equal(inbox, []string{"first", "second"}) { // the master now
		t.Errorf("inbox messages in the promoted replica's log = %q, want first and second, once each", inbox)
	}
}

// A lease renewal that Redis could not take just now is tried again at the
// next tick, while the lease still has time: the turn goes on and commits
// under its first claim.
func TestUnavailableRenewalKeepsTheTurn(t *testing.T) {
	t.Parallel()
	redisSrv := testutil.StartRedis(t)
	rdb := redisSrv.Client(t)
	drop := &nodetest.DropScript{Suffix: "_renew", Dropped: make(chan struct{})}
	rdb.AddHook(drop)
	model := nodetest.NewBlockingModel()
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, OnCommit: c.Add, LeaseTTL: 600 * time.Millisecond})
	rec, err := n.Create(context.Background(), NewProcess{Recipe: "default", Input: "take your time"})
	if err != nil {
		t.Fatal(err)
	}
	<-model.Entered
	select {
	case <-drop.Dropped:
	case <-time.After(nodetest.WaitTimeout):
		t.Fatal("no renewal was dropped")
	}
	close(model.Release)
	done := c.Wait(t, "the turn's commit", func(r store.Record) bool { return r.ID == rec.ID })
	if done.Status.State != lifecycle.Blocked {
		t.Errorf("state after the turn = %s, want BLOCKED", done.Status)
	}
	evs, err := nodetest.RedisLog(t, redisSrv, rec.ID)
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
	rdb.AddHook(&nodetest.DropScript{Suffix: "_renew", All: true, Dropped: make(chan struct{})})
	model := nodetest.NewStoppedModel()
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, LeaseTTL: 600 * time.Millisecond})
	if _, err := n.Create(context.Background(), NewProcess{Recipe: "default", Input: "take your time"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-model.Stopped:
	case <-time.After(nodetest.WaitTimeout):
		t.Fatal("the turn went on without a lease")
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
			model := nodetest.Script(t, `
turns:
  - rounds:
      - calls: [{name: tell_user, args: {message: "Looking."}}]
      - calls: [{name: respond, args: {message: "Found it."}}]
`)
			rdb := testutil.Redis(t)
			drop := &nodetest.DropScript{Suffix: "_" + step, Dropped: make(chan struct{})}
			rdb.AddHook(drop)
			c := nodetest.NewCommits()
			n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, OnCommit: c.Add, LeaseTTL: 500 * time.Millisecond})
			rec, err := n.Create(context.Background(), NewProcess{Recipe: "default", Input: "find it"})
			if err != nil {
				t.Fatal(err)
			}
			done := c.Wait(t, "the turn's commit", func(r store.Record) bool { return r.ID == rec.ID })
			select {
			case <-drop.Dropped:
			default:
				t.Fatalf("no %s was dropped", step)
			}
			if done.Status.State != lifecycle.Blocked {
				t.Errorf("after a dropped %s: %s, want BLOCKED (the turn recovered and answered)", step, done.Status)
			}
		})
	}
}
