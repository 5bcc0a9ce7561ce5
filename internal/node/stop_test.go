package node

import (
	"context"
	"errors"
	"testing"

	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/tools/mcp"
)

// Stop lets the running turn finish: no lease and no RUNNING process stay
// behind.
func TestGracefulStop(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	model := nodetest.NewBlockingModel()
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
	<-model.Entered
	stopped := make(chan error, 1)
	go func() { stopped <- n.Stop(ctx) }()
	close(model.Release)
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

// Stopping a node closes its MCP connections, stopping their processes.
func TestStopClosesMCP(t *testing.T) {
	t.Parallel()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": nodetest.Script(t, "turns: [{rounds: [{calls: [{name: respond, args: {message: hi}}]}]}]")}})
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := n.mcp.Tools(context.Background(), mcp.Server{Name: "x", Command: "x"}, nil); !errors.Is(err, mcp.ErrClosed) {
		t.Errorf("MCP pool after Stop: %v; want ErrClosed", err)
	}
}
