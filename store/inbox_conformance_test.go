package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/inbox/inboxtest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// TestInboxConformance runs the conformance suite of package inbox on the
// store, on one redis-server and on a Redis Cluster of three masters.
func TestInboxConformance(t *testing.T) {
	t.Parallel()
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		conformance(t, testutil.Redis(t))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		_, rdb := testutil.RedisCluster(t, 3, 0)
		conformance(t, rdb)
	})
}

func conformance(t *testing.T, rdb redis.UniversalClient) {
	c := &clock{t: t0}
	var made atomic.Int64
	inboxtest.Run(t, func(*testing.T) inboxtest.Harness {
		return &storeHarness{rdb: rdb, clock: c, made: &made, stores: map[int]*store.Store{}, of: map[string]*store.Store{},
			steering: map[string]inbox.Steering{}, claims: map[string]*store.Claim{}}
	})
}

// storeHarness makes processes for the suite through the store's API:
// Create, a claim and its commit, Transition. Each process has an engine
// of its own, so that its wakes are its own to read while other tests of
// the suite share the server.
type storeHarness struct {
	rdb   redis.UniversalClient
	clock *clock
	made  *atomic.Int64 // processes made by every harness of the test: ids

	mu       sync.Mutex
	stores   map[int]*store.Store // by inbox limit
	of       map[string]*store.Store
	steering map[string]inbox.Steering // by process
	claims   map[string]*store.Claim   // of the processes made RUNNING
}

func (h *storeHarness) Make(t *testing.T, st lifecycle.Status, limit int) (inbox.Inbox, string) {
	t.Helper()
	return h.MakeSteered(t, st, limit, inbox.SteeringQueue)
}

func (h *storeHarness) MakeSteered(t *testing.T, st lifecycle.Status, limit int, steering inbox.Steering) (inbox.Inbox, string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.stores[limit]
	if !ok {
		cfg := store.Config{Clock: h.clock.now, InboxLimit: limit}
		if limit == 0 {
			cfg.InboxLimit = -1 // the suite's 0 is no limit, the store's the default
		}
		var err error
		if s, err = store.New(h.rdb, cfg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		h.stores[limit] = s
	}
	pid := fmt.Sprintf("p%d", h.made.Add(1))
	h.of[pid] = s
	h.steering[pid] = steering
	h.bring(t, s, pid, st)
	if got := h.get(t, s, pid).Status; got != st {
		t.Fatalf("made %s %s, want %s", pid, got, st)
	}
	return s, pid
}

// bring makes process pid in status st.
func (h *storeHarness) bring(t *testing.T, s *store.Store, pid string, st lifecycle.Status) {
	t.Helper()
	ctx := context.Background()
	switch st.State {
	case lifecycle.Blocked:
		h.create(t, s, pid, nil)
	case lifecycle.Ready:
		c := h.running(t, s, pid)
		if _, err := s.Commit(ctx, c, nil, lifecycle.Continue, "model", nil); err != nil {
			t.Fatalf("Commit(%s): %v", pid, err)
		}
	case lifecycle.Running:
		h.claims[pid] = h.running(t, s, pid)
	case lifecycle.Paused:
		h.bring(t, s, pid, lifecycle.Status{State: st.PausedFrom})
		h.transition(t, s, pid, lifecycle.Pause)
	case lifecycle.Done:
		h.create(t, s, pid, nil)
		h.transition(t, s, pid, lifecycle.Finish)
	case lifecycle.Failed:
		h.running(t, s, pid)
		h.transition(t, s, pid, lifecycle.Fail)
	default:
		t.Fatalf("no way to make a process %s", st)
	}
}

func (h *storeHarness) create(t *testing.T, s *store.Store, pid string, input *store.Message) {
	t.Helper()
	np := store.NewProcess{ID: pid, Recipe: "assistant", Engine: pid, Input: input, Steering: h.steering[pid]}
	if _, err := s.Create(context.Background(), np); err != nil {
		t.Fatalf("Create(%s): %v", pid, err)
	}
}

// running creates process pid with a first message and claims its wake:
// RUNNING, its inbox drained.
func (h *storeHarness) running(t *testing.T, s *store.Store, pid string) *store.Claim {
	t.Helper()
	h.create(t, s, pid, &store.Message{Kind: conversation.KindUser, From: "user:ada", Content: "start"})
	return h.claim(t, s, pid)
}

// claim takes the wake of process pid, READY and queued: RUNNING, its
// inbox drained.
func (h *storeHarness) claim(t *testing.T, s *store.Store, pid string) *store.Claim {
	t.Helper()
	ctx := context.Background()
	ws, err := s.ReadWakes(ctx, "n1", []string{pid}, 10, wakeBlock(h.rdb))
	if err != nil || len(ws) != 1 {
		t.Fatalf("ReadWakes(%s) = %v, %v; want its wake", pid, ws, err)
	}
	c, err := s.Claim(ctx, ws[0], "n1", "t0")
	if err != nil {
		t.Fatalf("Claim(%s): %v", pid, err)
	}
	return c
}

func (h *storeHarness) transition(t *testing.T, s *store.Store, pid string, ev lifecycle.Event) {
	t.Helper()
	if _, _, err := s.Transition(context.Background(), pid, ev, "operator:olga"); err != nil {
		t.Fatalf("Transition(%s, %s): %v", pid, ev, err)
	}
}

func (h *storeHarness) get(t *testing.T, s *store.Store, pid string) store.Record {
	t.Helper()
	r, err := s.Get(context.Background(), pid)
	if err != nil {
		t.Fatalf("Get(%s): %v", pid, err)
	}
	return r
}

func (h *storeHarness) storeOf(pid string) *store.Store {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.of[pid]
}

func (h *storeHarness) Transition(t *testing.T, pid string, ev lifecycle.Event) {
	t.Helper()
	h.transition(t, h.storeOf(pid), pid, ev)
}

func (h *storeHarness) Claim(t *testing.T, pid string) {
	t.Helper()
	c := h.claim(t, h.storeOf(pid), pid)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.claims[pid] = c
}

// AwaitApproval commits the turn of process pid, made RUNNING, with calls
// waiting for approval.
func (h *storeHarness) AwaitApproval(t *testing.T, pid string, calls []conversation.PendingCall) {
	t.Helper()
	h.mu.Lock()
	c := h.claims[pid]
	h.mu.Unlock()
	if _, err := h.storeOf(pid).Commit(context.Background(), c, nil, lifecycle.AwaitUser, "model", nil, calls...); err != nil {
		t.Fatalf("Commit(%s) with approvals: %v", pid, err)
	}
}

// Observe reads the record, and who unblocked the process from the
// user_input state changes of its log.
func (h *storeHarness) Observe(t *testing.T, pid string) inboxtest.Observation {
	t.Helper()
	s := h.storeOf(pid)
	r := h.get(t, s, pid)
	evs, err := s.Log(context.Background(), pid, "", 0)
	if err != nil {
		t.Fatalf("Log(%s): %v", pid, err)
	}
	o := inboxtest.Observation{Status: r.Status, Queued: r.Queued}
	for _, e := range evs {
		if e.StateChange != nil && e.StateChange.Event == string(lifecycle.UserInput) {
			o.Unblocked = append(o.Unblocked, e.By)
		}
	}
	return o
}
