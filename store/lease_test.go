package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

func TestRenewLease(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	e.rdb.PExpire(e.ctx, e.key("p1", "lease"), time.Second)
	if running, err := e.s.RenewLease(e.ctx, c); err != nil || !running {
		t.Fatalf("RenewLease = %t, %v; want true, nil", running, err)
	}
	if ttl := e.rdb.PTTL(e.ctx, e.key("p1", "lease")).Val(); ttl <= time.Second {
		t.Errorf("lease TTL after renewal = %s, want about 10s", ttl)
	}
	// Paused during the turn: the lease is renewed (the turn saves what it
	// has under it), and its node learns that the process is not RUNNING.
	if _, _, err := e.s.Transition(e.ctx, "p1", lifecycle.Pause, "operator"); err != nil {
		t.Fatal(err)
	}
	e.rdb.PExpire(e.ctx, e.key("p1", "lease"), time.Second)
	if running, err := e.s.RenewLease(e.ctx, c); err != nil || running {
		t.Errorf("RenewLease of a paused process = %t, %v; want false, nil", running, err)
	}
	if ttl := e.rdb.PTTL(e.ctx, e.key("p1", "lease")).Val(); ttl <= time.Second {
		t.Errorf("lease TTL after renewal = %s, want about 10s", ttl)
	}
	e.rdb.Del(e.ctx, e.key("p1", "lease"))
	if _, err := e.s.RenewLease(e.ctx, c); !errors.Is(err, store.ErrFenced) {
		t.Errorf("RenewLease of a lost lease = %v, want ErrFenced", err)
	}
}

// TestRelease checks a graceful stop: the lease goes, the process and its
// wake stay, and another node recovers the turn.
func TestRelease(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	if err := e.s.Release(e.ctx, c); err != nil {
		t.Fatal(err)
	}
	if n := e.rdb.Exists(e.ctx, e.key("p1", "lease")).Val(); n != 0 {
		t.Error("lease kept")
	}
	if r := e.get(t, "p1"); r.Status.State != lifecycle.Running {
		t.Errorf("state = %s, want RUNNING", r.Status)
	}
	if got := e.pendingWakes(t); got["n1"] != 1 {
		t.Errorf("pending wakes = %v, want n1's", got)
	}
	stale, err := e.s.ClaimStaleWakes(e.ctx, "n2", []string{engine}, 0, 10)
	if err != nil || len(stale) != 1 {
		t.Fatalf("ClaimStaleWakes = %v, %v", stale, err)
	}
	r, err := e.s.Claim(e.ctx, stale[0], "n2", "")
	if err != nil || !r.Recovered || r.TurnID != "t1" {
		t.Fatalf("Claim after release = %+v, %v; want t1 recovered", r, err)
	}
}
