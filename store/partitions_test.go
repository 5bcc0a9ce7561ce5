package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/store"
)

// TestCheckLayout checks that the first node records the deployment's
// number of partitions, that a node configured for another refuses to
// start, and that a Redis holding the data of a brain from before
// partitions is refused with what to run.
func TestCheckLayout(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for range 2 { // the first records it; the second finds it
		if err := e.s.CheckLayout(e.ctx); err != nil {
			t.Fatalf("CheckLayout: %v", err)
		}
	}
	other, err := store.New(e.rdb, store.Config{Partitions: 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.CheckLayout(e.ctx); !errors.Is(err, store.ErrLayout) {
		t.Errorf("a node of 16 partitions on a deployment of %d: %v, want ErrLayout", store.DefaultPartitions, err)
	}

	old := testutil.Redis(t)
	if err := old.ZAdd(e.ctx, "brain:state:BLOCKED", redis.Z{Score: 1, Member: "p1"}).Err(); err != nil {
		t.Fatal(err)
	}
	s, err := store.New(old, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckLayout(e.ctx); !errors.Is(err, store.ErrLayout) || !strings.Contains(fmt.Sprint(err), "brain migrate") {
		t.Errorf("a Redis of the layout before partitions: %v, want ErrLayout naming brain migrate", err)
	}
	if n, _ := old.Exists(e.ctx, "brain:layout").Result(); n != 0 {
		t.Error("the refused Redis got a layout recorded")
	}
}

// TestWorkerID checks that a worker's id, generated or derived from a key,
// falls in its parent's partition, and that a key always gives the same.
func TestWorkerID(t *testing.T) {
	t.Parallel()
	e := setup(t)
	parent := e.create(t, "p_parent", nil)
	for _, key := range []string{"p_k1", "p_k2", "p_k3", "p_k4"} {
		id := e.s.WorkerID(parent.ID, key)
		if store.Partition(store.DefaultPartitions, id) != store.Partition(store.DefaultPartitions, parent.ID) {
			t.Errorf("WorkerID(%s, %s) = %s, in another partition than its parent", parent.ID, key, id)
		}
		if again := e.s.WorkerID(parent.ID, key); again != id {
			t.Errorf("WorkerID(%s, %s) = %s, then %s", parent.ID, key, id, again)
		}
	}
	w, err := e.s.Create(e.ctx, store.NewProcess{Recipe: "r", Engine: engine, Parent: parent.ID})
	if err != nil {
		t.Fatal(err)
	}
	if store.Partition(store.DefaultPartitions, w.ID) != store.Partition(store.DefaultPartitions, parent.ID) {
		t.Errorf("a worker created without an id got %s, in another partition than its parent", w.ID)
	}
	elsewhere := "p_k0"
	for i := 1; store.Partition(store.DefaultPartitions, elsewhere) == store.Partition(store.DefaultPartitions, parent.ID); i++ {
		elsewhere = fmt.Sprint("p_k", i)
	}
	_, err = e.s.Create(e.ctx, store.NewProcess{ID: elsewhere, Recipe: "r", Engine: engine, Parent: parent.ID})
	if !errors.Is(err, store.ErrWorkerPartition) || !strings.Contains(err.Error(), "WorkerID") {
		t.Errorf("a worker named in another partition: %v, want ErrWorkerPartition saying to use WorkerID", err)
	}
	if _, err := e.s.Get(e.ctx, elsewhere); err == nil {
		t.Error("the refused worker exists")
	}
}
