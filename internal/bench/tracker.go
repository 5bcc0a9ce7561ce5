package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// stallTimeout is how long a phase waits without a single commit before
// it gives up: a sign that something is stuck, not that a machine is slow.
const stallTimeout = time.Minute

// tracker follows a node's commits through Config.OnCommit: how many turns
// ran, which messages were drained and when their turn started, and where
// each process stands. Phases wait on it instead of sleeping.
type tracker struct {
	mu    sync.Mutex
	turns int
	// drained maps messageKey(process, message) to the At of the
	// turn_start of the turn that drained it.
	drained map[string]time.Time
	// latest is each process's record after its newest commit (highest
	// Version: commits of one process may be reported out of order).
	latest  map[string]store.Record
	blocked int // processes whose latest record is BLOCKED
	failed  error
	changed chan struct{} // signalled after every commit
	// committed is broadcast after every commit, for awaitDrained.
	committed *sync.Cond
}

func newTracker() *tracker {
	t := &tracker{
		drained: make(map[string]time.Time),
		latest:  make(map[string]store.Record),
		changed: make(chan struct{}, 1),
	}
	t.committed = sync.NewCond(&t.mu)
	return t
}

// messageKey names a message across processes: inbox ids are per process.
func messageKey(pid, msgID string) string { return pid + "/" + msgID }

// onCommit is the node's Config.OnCommit.
func (t *tracker) onCommit(rec store.Record, events []conversation.Event) {
	var start time.Time
	for _, e := range events {
		if e.Type == conversation.TypeTurnStart {
			start = e.At
			break
		}
	}
	t.mu.Lock()
	t.turns++
	if t.latest == nil { // forgotten
		t.mu.Unlock()
		return
	}
	for _, e := range events {
		if e.Type == conversation.TypeInboxMessage && e.Turn != "" && e.InboxMessage != nil {
			t.drained[messageKey(rec.ID, e.InboxMessage.MessageID)] = start
		}
	}
	if old, ok := t.latest[rec.ID]; !ok || rec.Version > old.Version {
		if ok && old.Status.State == lifecycle.Blocked {
			t.blocked--
		}
		if rec.Status.State == lifecycle.Blocked {
			t.blocked++
		}
		t.latest[rec.ID] = rec
	}
	if rec.Status.State == lifecycle.Failed && t.failed == nil {
		t.failed = fmt.Errorf("process %s FAILED in a turn (the node's log says why)", rec.ID)
	}
	t.committed.Broadcast()
	t.mu.Unlock()
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// progress is what a wait condition looks at.
type progress struct {
	turns, drained, blocked int
}

// wait returns the progress that satisfied done, checking after every
// commit. It fails when a process FAILED, when ctx ends, or when no turn
// commits for stallTimeout; what says what was still missing then.
func (t *tracker) wait(ctx context.Context, done func(progress) bool, what func(progress) string) (progress, error) {
	stall := time.NewTimer(stallTimeout)
	defer stall.Stop()
	for {
		t.mu.Lock()
		p := progress{turns: t.turns, drained: len(t.drained), blocked: t.blocked}
		failed := t.failed
		t.mu.Unlock()
		switch {
		case failed != nil:
			return p, failed
		case done(p):
			return p, nil
		}
		select {
		case <-t.changed:
			stall.Reset(stallTimeout)
		case <-stall.C:
			return p, fmt.Errorf("no turn committed for %s: %s", stallTimeout, what(p))
		case <-ctx.Done():
			return p, ctx.Err()
		}
	}
}

// awaitDrained waits until message key is drained, a process FAILED or
// ctx ends.
func (t *tracker) awaitDrained(ctx context.Context, key string) error {
	stop := context.AfterFunc(ctx, func() {
		t.mu.Lock()
		t.committed.Broadcast()
		t.mu.Unlock()
	})
	defer stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		if _, ok := t.drained[key]; ok {
			return nil
		}
		if t.failed != nil {
			return t.failed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		t.committed.Wait()
	}
}

// drainedAt returns when the turn that drained message key started.
func (t *tracker) drainedAt(key string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.drained[key]
	return at, ok
}

// forget drops what the tracker holds, so that it does not weigh on the
// heap figures.
func (t *tracker) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drained, t.latest = nil, nil
}
