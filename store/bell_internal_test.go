package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/internal/testutil"
)

// onBellCluster returns a store on a cluster of three masters, closed when
// the test ends.
func onBellCluster(t *testing.T) (*Store, *redisserver.Cluster, *redis.ClusterClient) {
	t.Helper()
	cluster, cc := testutil.RedisCluster(t, 3, 0)
	s, err := New(cc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, cluster, cc
}

// ringFor creates chat process pid, which queues its wake, and returns
// which of streams its bell's ring named, once it rang. A ring or a rung
// stream left from before is dropped first.
func ringFor(t *testing.T, s *Store, pid string, streams []string) []string {
	t.Helper()
	select {
	case <-s.bell.rings:
	default:
	}
	s.bell.take(streams)
	in := inbox.Message{Kind: "user", From: "user:ada", Content: "hello"}
	if _, err := s.Create(context.Background(), NewProcess{ID: pid, Recipe: "r", Engine: "chat", Input: &in}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.bell.rings:
	case <-time.After(10 * time.Second): // a guard against a bell that never rings, not a measure
		t.Fatalf("no ring for %s's wake", pid)
	}
	rung, _ := s.bell.take(streams)
	return rung
}

// TestBellRings sets a bell up on a 3-master cluster: a message that
// queues a wake, on whichever master, rings it for that wake's stream; a
// closed bell is not set up again.
func TestBellRings(t *testing.T) {
	t.Parallel()
	s, _, cc := onBellCluster(t)
	ctx := context.Background()
	streams, err := s.wakeStreams([]string{"chat"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.bell.ready(ctx, cc) {
		t.Fatal("the bell did not set up")
	}
	if n := len(s.bell.masters); n != 3 {
		t.Errorf("the bell is on %d masters, want 3", n)
	}
	if rung, all := s.bell.take(streams); !all || len(rung) != 0 {
		t.Errorf("a bell just set up rang for %v (all %v), want everything: what changed before went unheard", rung, all)
	}
	for _, pid := range []string{"p1", "p2", "p3", "p4"} {
		want := s.keys.wake(s.keys.partition(pid), "chat")
		if rung := ringFor(t, s, pid, streams); !slices.Equal(rung, []string{want}) {
			t.Errorf("the ring for %s's wake named %v, want %s", pid, rung, want)
		}
	}
	s.Close()
	if s.bell.ready(ctx, cc) {
		t.Error("a closed bell set up again")
	}
}

// TestBellAfterLostSubscriber kills the bell's subscriber on a master: the
// bell is set up again at the next read, and rings on.
func TestBellAfterLostSubscriber(t *testing.T) {
	t.Parallel()
	s, cluster, cc := onBellCluster(t)
	ctx := context.Background()
	if !s.bell.ready(ctx, cc) {
		t.Fatal("the bell did not set up")
	}
	addr := cluster.Masters[0].Addr
	lost := s.bell.masters[addr]
	admin := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost.done:
	case <-time.After(10 * time.Second): // a guard, not a measure
		t.Fatal("the bell did not notice its subscriber's loss")
	}
	if !s.bell.ready(ctx, cc) {
		t.Fatal("the bell was not set up again")
	}
	if s.bell.masters[addr] == lost {
		t.Fatal("the bell kept the master's part that lost its subscriber")
	}
	if _, all := s.bell.take(nil); !all {
		t.Error("a bell set up again did not ring for everything: what changed meanwhile went unheard")
	}
	// A process whose partition that master serves rings the new bell.
	for i := 0; ; i++ {
		pid := fmt.Sprintf("p%d", i)
		m, err := cc.MasterForKey(ctx, s.keys.proc(pid))
		if err != nil {
			t.Fatal(err)
		}
		if m.Options().Addr != addr {
			continue
		}
		want := s.keys.wake(s.keys.partition(pid), "chat")
		if rung := ringFor(t, s, pid, []string{want}); !slices.Equal(rung, []string{want}) {
			t.Errorf("the ring for %s's wake named %v, want %s", pid, rung, want)
		}
		break
	}
}

// TestReadWakesOnRing checks that a read on a Cluster takes a wake as its
// bell rings, not at the next round over every stream: after a round that
// found nothing, the next is bellPoll away, and a read that blocks for
// half as long finds the wake queued meanwhile.
func TestReadWakesOnRing(t *testing.T) {
	t.Parallel()
	s, _, _ := onBellCluster(t)
	ctx := context.Background()
	if ws, err := s.ReadWakes(ctx, "n1", []string{"chat"}, 10, time.Millisecond); err != nil || len(ws) != 0 {
		t.Fatalf("ReadWakes on an empty store = %v, %v", ws, err)
	}
	in := inbox.Message{Kind: "user", From: "user:ada", Content: "hello"}
	if _, err := s.Create(ctx, NewProcess{ID: "p1", Recipe: "r", Engine: "chat", Input: &in}); err != nil {
		t.Fatal(err)
	}
	ws, err := s.ReadWakes(ctx, "n1", []string{"chat"}, 10, bellPoll/2)
	if err != nil || len(ws) != 1 || ws[0].PID != "p1" {
		t.Fatalf("ReadWakes after p1's wake = %v, %v; want p1's, on the ring", ws, err)
	}
}

// TestBellAfterLostTracking kills the bell's tracking connection on a
// master: the check that follows finds the master no longer tracks the
// bell keys and sets the bell up again.
func TestBellAfterLostTracking(t *testing.T) {
	t.Parallel()
	s, cluster, cc := onBellCluster(t)
	ctx := context.Background()
	if !s.bell.ready(ctx, cc) {
		t.Fatal("the bell did not set up")
	}
	addr := cluster.Masters[0].Addr
	lost := s.bell.masters[addr]
	admin := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = admin.Close() })
	id, err := lost.tracking.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "CLIENT", "KILL", "ID", id).Err(); err != nil {
		t.Fatal(err)
	}
	s.bell.mu.Lock()
	s.bell.checked = time.Time{} // the check is due
	s.bell.mu.Unlock()
	if !s.bell.ready(ctx, cc) {
		t.Fatal("the bell was not set up again")
	}
	if s.bell.masters[addr] == lost {
		t.Fatal("the bell kept the master's part whose tracking was lost")
	}
	want := s.keys.wake(0, "chat")
	for i := 0; ; i++ { // a process of partition 0 rings the new bell
		if pid := fmt.Sprintf("p%d", i); s.keys.partition(pid) == 0 {
			if rung := ringFor(t, s, pid, []string{want}); !slices.Equal(rung, []string{want}) {
				t.Errorf("the ring for %s's wake named %v, want %s", pid, rung, want)
			}
			break
		}
	}
}
