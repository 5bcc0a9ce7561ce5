package node

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/redisdial"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// testRecipes loads the recipes of testdata/recipes.
func testRecipes(t testing.TB) *recipes.Library {
	t.Helper()
	return nodetest.Recipes(t, "testdata/recipes")
}

// A deployment is a Redis the runtime suite runs on: one redis-server, or
// a Redis Cluster of three masters.
type deployment struct {
	// client returns a new client of it, closed when the test ends.
	client func(t testing.TB) redis.UniversalClient
	// log reads process pid's log.
	log func(t testing.TB, pid string) []conversation.Event
}

// onEveryDeployment runs test as a subtest on each kind of deployment.
func onEveryDeployment(t *testing.T, test func(t *testing.T, d deployment)) {
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := testutil.StartRedis(t)
		test(t, newDeployment(func(t testing.TB) redis.UniversalClient { return srv.Client(t) }))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c, _ := testutil.RedisCluster(t, 3, 0)
		test(t, newDeployment(func(t testing.TB) redis.UniversalClient {
			cc := redisdial.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
			t.Cleanup(func() { _ = cc.Close() })
			return cc
		}))
	})
}

func newDeployment(client func(t testing.TB) redis.UniversalClient) deployment {
	return deployment{client: client, log: func(t testing.TB, pid string) []conversation.Event {
		t.Helper()
		st, err := store.New(client(t), store.Config{})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.Log(context.Background(), pid, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}}
}

// startNode starts a node with cfg, with the recipes of testdata/recipes
// unless cfg has some, and stops it when the test ends.
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

// delegation is a script for the built-in recipes: arthur spawns a
// marvin-worker with a task, the worker finishes it ("three rows"), and
// arthur answers the worker's report.
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

// lastKept is the id of the last event n keeps for process pid.
func lastKept(n *Node, pid string) string {
	id, _ := n.histories.known(pid)
	return id
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
	c := nodetest.NewCommits()
	cfg.Models, cfg.Recipes, cfg.OnCommit = map[string]llm.Model{"default": nodetest.Script(t, delegation)}, recipes.Builtin(), c.Add
	n := startNode(t, cfg)
	parent, err := n.Create(context.Background(), NewProcess{Recipe: "arthur", Input: "count the rows", Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the parent's turn", func(r store.Record) bool { return r.ID == parent.ID && until(r) })
	return n, parent
}
