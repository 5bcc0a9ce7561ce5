package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/engine-brain/brain/store"
)

// Follow returns what is in the log after a position, and waits for what
// arrives next.
func TestFollow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := e.create(t, "p1", nil)
	m := user("hello")
	e.post(t, r.ID, m) // BLOCKED + user: unblocks, which logs a state change
	evs, err := e.s.Follow(e.ctx, r.ID, "", time.Second)
	if err != nil || len(evs) != 1 || evs[0].StateChange == nil {
		t.Fatalf("Follow from the start = %+v, %v; want the state change", evs, err)
	}
	got := make(chan int, 1)
	go func() {
		more, err := e.s.Follow(e.ctx, r.ID, evs[0].ID, 10*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- len(more)
	}()
	e.claim(t, r.ID, "t1") // appends the turn start, the wake and the drained message
	if n := <-got; n == 0 {
		t.Fatal("Follow returned nothing although the claim appended events")
	}
	if _, err := e.s.Follow(e.ctx, "bad id!", "", time.Millisecond); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Follow of an invalid id = %v, want ErrNotFound", err)
	}
}
