package node

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// A node on a Redis migrated from the layout before partitions (store's
// testdata: a brain of that layout left it) runs every process on: the
// message that waited is answered, the turn a stopped node cut short is
// recovered and committed, the queued worker runs, and a process that
// waited for its user answers a new message.
func TestNodeAfterMigrate(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	rdb := srv.Client(t)
	testutil.Replay(t, rdb, "../../store/testdata/legacy-layout.jsonl")
	model := nodetest.Script(t, "turns:\n"+strings.Repeat("  - rounds: [{calls: [{name: respond, args: {message: \"ok\", awaiting_user_input: true}}]}]\n", 10))
	cfg := Config{Redis: rdb, Recipes: recipes.Builtin(), Models: map[string]llm.Model{"default": model}}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "brain migrate") {
		t.Fatalf("a node on the old layout started: %v; want it refused, naming brain migrate", err)
	}
	st, err := store.New(rdb, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c := nodetest.NewCommits()
	cfg.OnCommit = c.Add
	n = startNode(t, cfg)
	for _, pid := range []string{"p_ready", "p_running", "p_worker"} {
		c.Wait(t, "a turn of "+pid, func(r store.Record) bool { return r.ID == pid })
	}
	running := c.Wait(t, "p_running's recovered turn", func(r store.Record) bool { return r.ID == "p_running" })
	if running.Status.State != lifecycle.Blocked {
		t.Errorf("p_running after its recovered turn: %s, want BLOCKED", running.Status.State)
	}
	if _, err := n.Send(context.Background(), "p_blocked", "user:alice", "still there?", ""); err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "p_blocked's answer", func(r store.Record) bool { return r.ID == "p_blocked" && r.Status.State == lifecycle.Blocked })
}
