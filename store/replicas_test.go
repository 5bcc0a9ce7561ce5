package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/store"
)

// With WaitReplicas, a write is answered once the replicas have it: on the
// replica the moment the call returns. A master with too few replicas
// still makes the write, but the call fails with ErrNotReplicated, which
// Unavailable reports (retry it, with its idempotency key).
func TestWaitReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	master := testutil.StartRedis(t)
	primary := master.Client(t)
	replica := testutil.StartReplica(t, master)
	s, err := store.New(primary, store.Config{WaitReplicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := user("hello")
	if _, err := s.Create(ctx, store.NewProcess{ID: "p1", Recipe: "r", Engine: engine, Input: &in}); err != nil {
		t.Fatal(err)
	}
	if n, err := replica.Client(t).XLen(ctx, store.Key(store.DefaultPartitions, "p1", "inbox")).Result(); err != nil || n != 1 {
		t.Errorf("the replica's inbox of p1 right after the create: %d, %v; want the message", n, err)
	}

	short, err := store.New(primary, store.Config{WaitReplicas: 2, WaitTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = short.Create(ctx, store.NewProcess{ID: "p2", Recipe: "r", Engine: engine})
	if !errors.Is(err, store.ErrNotReplicated) || !store.Unavailable(err) {
		t.Fatalf("a create with one replica of two: %v; want ErrNotReplicated, unavailable", err)
	}
	if _, err := s.Get(ctx, "p2"); err != nil {
		t.Errorf("the master made the create all the same: %v", err)
	}
	if _, err := store.New(primary, store.Config{WaitReplicas: -1}); err == nil {
		t.Error("WaitReplicas -1: no error")
	}

	// The scripts run as EVAL scripts (an ACL user without functions) wait
	// the same way.
	acl := []any{"ACL", "SETUSER", "evaler", "on", ">secret", "~*", "&*", "+@all", "-fcall", "-function"}
	if err := primary.Do(ctx, acl...).Err(); err != nil {
		t.Fatal(err)
	}
	evaler := redis.NewClient(&redis.Options{Addr: master.Addr, Username: "evaler", Password: "secret"})
	t.Cleanup(func() { _ = evaler.Close() })
	for replicas, want := range map[int]error{1: nil, 2: store.ErrNotReplicated} {
		s, err := store.New(evaler, store.Config{WaitReplicas: replicas, WaitTimeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("e%d", replicas)
		if _, err := s.Create(ctx, store.NewProcess{ID: id, Recipe: "r", Engine: engine}); !errors.Is(err, want) {
			t.Errorf("an EVAL create waiting for %d replicas: %v, want %v", replicas, err, want)
		}
	}
}

// On a Cluster, WaitReplicas waits on each master for its own replicas: a
// master whose replica is gone fails the writes it took (the master made
// them) while the others answer.
func TestWaitReplicasOnCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, rdb := testutil.RedisCluster(t, 3, 1)
	s, err := store.New(rdb, store.Config{WaitReplicas: 1, WaitTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// A process on each master, as its keys fall.
	onMaster := map[string]string{} // master address -> pid
	for i := 0; len(onMaster) < 3 && i < 100; i++ {
		pid := fmt.Sprint("p", i)
		m, err := rdb.MasterForKey(ctx, store.Key(store.DefaultPartitions, pid, "proc"))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := onMaster[m.Options().Addr]; !ok {
			onMaster[m.Options().Addr] = pid
		}
	}
	for _, pid := range onMaster {
		if _, err := s.Create(ctx, store.NewProcess{ID: pid, Recipe: "r", Engine: engine}); err != nil {
			t.Fatalf("create %s with every replica up: %v", pid, err)
		}
	}
	// The first master's replica hangs: still connected, it acknowledges
	// nothing more. (A WAIT sent on a connection that wrote nothing would
	// count it all the same; one sent after the writes, on theirs, does
	// not.)
	if err := c.Replicas[0][0].Freeze(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Replicas[0][0].Thaw() })
	// Posts to every master at once, so that pipelines hold calls of
	// several masters.
	var wg sync.WaitGroup
	for addr, pid := range onMaster {
		for i := range 10 {
			wg.Go(func() {
				_, _, err := s.Post(ctx, pid, msg(conversation.KindOperator, "operator:olga", fmt.Sprint("hello ", i)))
				if addr == c.Masters[0].Addr {
					if !errors.Is(err, store.ErrNotReplicated) {
						t.Errorf("a post to %s, on the master without its replica: %v, want ErrNotReplicated", pid, err)
					}
				} else if err != nil {
					t.Errorf("a post to %s, on a master with its replica: %v", pid, err)
				}
			})
		}
	}
	wg.Wait()
}
