package store_test

import (
	"testing"
	"time"
)

// A named lease has one holder at a time: the holder renews it, another
// waits until it is dropped (or lapses).
func TestHoldLease(t *testing.T) {
	t.Parallel()
	e := setup(t)
	hold := func(holder string) bool {
		t.Helper()
		held, err := e.s.HoldLease(e.ctx, "gauge", holder, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return held
	}
	if !hold("n1") {
		t.Fatal("n1 did not take a free lease")
	}
	if hold("n2") {
		t.Fatal("n2 took n1's lease")
	}
	e.rdb.PExpire(e.ctx, "brain:lease:gauge", time.Second)
	if !hold("n1") {
		t.Fatal("n1 could not renew its lease")
	}
	if ttl := e.rdb.PTTL(e.ctx, "brain:lease:gauge").Val(); ttl <= time.Second {
		t.Errorf("TTL after renewal = %s, want about 10s", ttl)
	}
	if err := e.s.DropLease(e.ctx, "gauge", "n2"); err != nil {
		t.Fatal(err)
	}
	if hold("n2") {
		t.Fatal("n2 dropped n1's lease")
	}
	if err := e.s.DropLease(e.ctx, "gauge", "n1"); err != nil {
		t.Fatal(err)
	}
	if !hold("n2") {
		t.Error("n2 did not take the lease n1 dropped")
	}
}
