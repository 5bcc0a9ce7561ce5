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
	// The bell is up: the wake below can only be found by its ring (without
	// one, the reads would poll 1 to 16 ms apart and find it too).
	s.bell.mu.Lock()
	up := s.bell.up
	s.bell.mu.Unlock()
	if err := s.WakeBell(); err != nil || !up {
		t.Fatalf("the bell is not up (%v)", err)
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

// TestBellSetUpAgain breaks the bell's part on a master, its subscriber
// or its tracking connection killed: the bell notices (the subscriber's
// goroutine ends; the check once a bellRetry finds the master no longer
// tracks the bell keys), is set up again, rings for everything that went
// unheard, and rings on.
func TestBellSetUpAgain(t *testing.T) {
	t.Parallel()
	for name, lose := range map[string]func(t *testing.T, s *Store, admin *redis.Client, lost *bellMaster){
		"subscriber": func(t *testing.T, _ *Store, admin *redis.Client, lost *bellMaster) {
			if err := admin.Do(t.Context(), "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-lost.done:
			case <-time.After(10 * time.Second): // a guard, not a measure
				t.Fatal("the bell did not notice its subscriber's loss")
			}
		},
		"tracking": func(t *testing.T, s *Store, admin *redis.Client, lost *bellMaster) {
			id, err := lost.tracking.ClientID(t.Context()).Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := admin.Do(t.Context(), "CLIENT", "KILL", "ID", id).Err(); err != nil {
				t.Fatal(err)
			}
			s.bell.mu.Lock()
			s.bell.checked = time.Time{} // the check is due
			s.bell.mu.Unlock()
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, cluster, cc := onBellCluster(t)
			ctx := t.Context()
			if !s.bell.ready(ctx, cc) {
				t.Fatal("the bell did not set up")
			}
			addr := cluster.Masters[0].Addr
			lost := s.bell.masters[addr]
			admin := redis.NewClient(&redis.Options{Addr: addr})
			t.Cleanup(func() { _ = admin.Close() })
			s.bell.take(nil)
			lose(t, s, admin, lost)
			if !s.bell.ready(ctx, cc) {
				t.Fatal("the bell was not set up again")
			}
			if s.bell.masters[addr] == lost {
				t.Fatal("the bell kept the master's part that was lost")
			}
			if _, all := s.bell.take(nil); !all {
				t.Error("a bell set up again did not ring for everything: what changed meanwhile went unheard")
			}
			want := s.keys.wake(0, "chat") // partition 0 is on the first master
			for i := 0; ; i++ {
				if pid := fmt.Sprintf("p%d", i); s.keys.partition(pid) == 0 {
					if rung := ringFor(t, s, pid, []string{want}); !slices.Equal(rung, []string{want}) {
						t.Errorf("the ring for %s's wake named %v, want %s", pid, rung, want)
					}
					break
				}
			}
		})
	}
}
