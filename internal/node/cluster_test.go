package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	zapobserver "go.uber.org/zap/zaptest/observer"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/redisdial"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

// A master of a Redis Cluster dies under load and a replica takes over:
// with WaitReplicas 1 (and two replicas a master, so that the one promoted
// still has one to wait for), nothing answered is lost — every message whose
// post was answered is drained once, whichever master its process's
// partition is on, and every process ends BLOCKED with an empty inbox.
// Without waiting, what the dead master had not passed on may be lost, as
// Redis documents, but no message is drained twice and every process
// settles. Posts that fail while the cluster fails over are not answered,
// and are not counted.
func TestClusterMasterFailover(t *testing.T) {
	t.Parallel()
	for name, wait := range map[string]int{"waiting for a replica": 1, "without waiting": 0} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testClusterMasterFailover(t, wait)
		})
	}
}

func testClusterMasterFailover(t *testing.T, wait int) {
	cluster, _ := testutil.RedisCluster(t, 3, 2)
	client := func() redis.UniversalClient {
		// A dead master refuses at once on loopback; the short timeouts
		// only keep a post to it from hanging while the cluster fails over.
		cc := redisdial.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs(), DialTimeout: 200 * time.Millisecond,
			ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: 1})
		t.Cleanup(func() { _ = cc.Close() })
		return cc
	}
	model := nodetest.Script(t, `turns: [{rounds: [{calls: [{name: respond, args: {message: "ok", awaiting_user_input: true}}]}]}]`)
	progress := make(chan struct{}, 1)
	onCommit := func(store.Record, []conversation.Event) {
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	n := startNode(t, Config{Redis: client(), Models: map[string]llm.Model{"default": model}, OnCommit: onCommit,
		WaitReplicas: wait, LeaseTTL: 2 * time.Second, Concurrency: 8})
	ctx := context.Background()
	const procs = 30
	pids := make([]string, procs)
	for i := range pids {
		rec, err := n.Create(ctx, NewProcess{Recipe: "default"})
		if err != nil {
			t.Fatal(err)
		}
		pids[i] = rec.ID
	}
	answered := map[string]bool{}
	post := func(round int) {
		for _, pid := range pids {
			content := fmt.Sprint("message ", round)
			if _, err := n.Send(ctx, pid, "user:ada", content, ""); err == nil {
				answered[pid+"/"+content] = true
			}
		}
	}
	for round := range 3 {
		post(round)
	}
	cluster.Masters[0].Close() // a crash, under load
	for round := 3; round < 6; round++ {
		post(round)
	}
	tctx, cancel := context.WithTimeout(ctx, nodetest.WaitTimeout)
	defer cancel()
	if _, err := cluster.WaitTakeover(tctx, cluster.Masters[0]); err != nil {
		t.Fatal(err)
	}
	for round := 6; round < 8; round++ {
		post(round)
	}
	if len(answered) < procs*5 {
		t.Fatalf("only %d of %d posts answered", len(answered), procs*8)
	}

	st, err := store.New(client(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, pid := range pids {
		// Once it is BLOCKED with nothing in its inbox, every message
		// posted to it was drained.
		deadline := time.NewTimer(nodetest.WaitTimeout)
		for done := false; !done; {
			rec, err := st.Get(ctx, pid)
			switch {
			case err == nil && rec.Status.State == lifecycle.Blocked && rec.Inbox == 0:
				done = true
			default:
				select {
				case <-progress:
				case <-deadline.C:
					t.Fatalf("%s is %+v (queued %v, inbox %d), %v; want BLOCKED with an empty inbox", pid, rec.Status, rec.Queued, rec.Inbox, err)
				}
			}
		}
		deadline.Stop()
		evs, err := st.Log(ctx, pid, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, e := range evs {
			if e.InboxMessage != nil {
				seen[e.InboxMessage.Content]++
			}
		}
		for m := range answered {
			p, content, _ := strings.Cut(m, "/")
			switch {
			case p != pid:
			case seen[content] > 1:
				t.Errorf("%s: %q is in the log %d times, want once", pid, content, seen[content])
			case seen[content] == 0 && wait > 0:
				t.Errorf("%s: %q, answered, is not in the log", pid, content)
			case seen[content] == 0:
				lost++
			}
		}
	}
	if wait == 0 {
		t.Logf("answered messages lost without waiting for replicas: %d of %d", lost, len(answered))
	}
}

// A node on a Cluster whose Redis user may not use CLIENT cannot set up
// its wake bell: it says so once, with what to allow, and runs its
// processes all the same, polling its wake streams.
func TestNodeWithoutWakeBell(t *testing.T) {
	t.Parallel()
	cluster, _ := testutil.RedisCluster(t, 3, 0)
	rdb := testutil.ClusterUser(t, cluster, "+@all", "-client")
	ctx := context.Background()
	core, logs := zapobserver.New(zap.InfoLevel)
	c := nodetest.NewCommits()
	model := nodetest.Script(t, "turns:\n"+strings.Repeat("  - rounds: [{calls: [{name: respond, args: {message: \"ok\"}}]}]\n", 2))
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, OnCommit: c.Add, Logger: zap.New(core)})
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the first turn", func(store.Record) bool { return len(c.Records()) == 1 })
	if _, err := n.Send(ctx, rec.ID, "user:ada", "second", ""); err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the second turn", func(store.Record) bool { return len(c.Records()) == 2 })
	warned := logs.FilterMessageSnippet("instead of waiting on the wake bell").All()
	if len(warned) != 1 || !strings.Contains(fmt.Sprint(warned[0].ContextMap()["error"]), "NOPERM") {
		t.Errorf("warnings about the bell: %v; want one, saying NOPERM", warned)
	}
}
