package node

import (
	"context"
	"errors"
	"testing"

	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

// A create repeated with its idempotency key returns the process the first
// made; the key is the owner's, and a key used for another recipe is
// refused.
func TestIdempotentCreate(t *testing.T) {
	t.Parallel()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": nodetest.Script(t, "turns: [{rounds: [{text: hi}]}]")}})
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

// A process keeps its recipe's steering: one whose recipe rejects a user's
// messages while a turn runs refuses them then (inbox.ErrBusy), and takes
// an operator's; a process of a recipe that says nothing queues them.
func TestCreateKeepsTheSteering(t *testing.T) {
	t.Parallel()
	model := nodetest.NewBlockingModel()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}})
	ctx := context.Background()
	plain, err := n.Create(ctx, NewProcess{Recipe: "default", Owner: "ada"})
	if err != nil || plain.Steering != inbox.SteeringQueue {
		t.Fatalf("a default process: steering %q, %v; want queue", plain.Steering, err)
	}
	rec, err := n.Create(ctx, NewProcess{Recipe: "busy", Owner: "ada", Input: "hello"})
	if err != nil || rec.Steering != inbox.SteeringReject {
		t.Fatalf("a busy process: steering %q, %v; want reject", rec.Steering, err)
	}
	<-model.Entered // the turn runs: its model call is in flight
	_, err = n.Send(ctx, rec.ID, "user:ada", "and?", "")
	var busy *inbox.BusyError
	if !errors.As(err, &busy) || busy.PID != rec.ID || !errors.Is(err, inbox.ErrBusy) {
		t.Errorf("a user's message during the turn = %v, want an *inbox.BusyError for %s", err, rec.ID)
	}
	if _, err := n.Steer(ctx, rec.ID, "operator:olga", "hurry", ""); err != nil {
		t.Errorf("an operator's message during the turn = %v, want it taken", err)
	}
	close(model.Release)
}
