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
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// t0 is the test clock's start.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// clock steps a millisecond on every reading, so that records created one
// after the other have distinct, ordered times. Safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// env is a store on its own redis-server.
type env struct {
	ctx   context.Context
	rdb   redis.UniversalClient
	s     *store.Store
	clock *clock
	// partitions is the store's number of partitions.
	partitions int
}

// key names part of process pid's keys in the env's store (store.Key).
func (e *env) key(pid, part string) string { return store.Key(e.partitions, pid, part) }

const engine = "chat"

func setup(t testing.TB) *env {
	t.Helper()
	return setupIn(t, store.DefaultPartitions)
}

// onEveryDeployment runs test as a subtest with an env on one
// redis-server and with one on a Redis Cluster of three masters.
func onEveryDeployment(t *testing.T, test func(t *testing.T, e *env)) {
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		test(t, setup(t))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		_, rdb := testutil.RedisCluster(t, 3, 0)
		c := &clock{t: t0}
		s, err := store.New(rdb, store.Config{Clock: c.now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		test(t, &env{ctx: context.Background(), rdb: rdb, s: s, clock: c, partitions: store.DefaultPartitions})
	})
}

// setupIn is setup with a number of partitions: 1 for a test that names
// its workers (a worker's id must fall in its parent's partition).
func setupIn(t testing.TB, partitions int) *env {
	t.Helper()
	rdb := testutil.Redis(t)
	c := &clock{t: t0}
	s, err := store.New(rdb, store.Config{Clock: c.now, Partitions: partitions})
	if err != nil {
		t.Fatalf("store.New: %v", err)
	}
	return &env{ctx: context.Background(), rdb: rdb, s: s, clock: c, partitions: partitions}
}

func user(content string) store.Message {
	return store.Message{Kind: conversation.KindUser, From: "user:alice", Content: content}
}

func msg(kind conversation.Kind, from, content string) store.Message {
	return store.Message{Kind: kind, From: from, Content: content}
}

func (e *env) create(t testing.TB, id string, input *store.Message) store.Record {
	t.Helper()
	r, err := e.s.Create(e.ctx, store.NewProcess{ID: id, Recipe: "assistant", Engine: engine, Owner: "alice", Input: input})
	if err != nil {
		t.Fatalf("Create(%s): %v", id, err)
	}
	return r
}

func (e *env) post(t testing.TB, pid string, m store.Message) string {
	t.Helper()
	id, _, err := e.s.Post(e.ctx, pid, m)
	if err != nil {
		t.Fatalf("Post(%s, %q): %v", pid, m.Content, err)
	}
	return id
}

func (e *env) get(t testing.TB, pid string) store.Record {
	t.Helper()
	r, err := e.s.Get(e.ctx, pid)
	if err != nil {
		t.Fatalf("Get(%s): %v", pid, err)
	}
	return r
}

// wakeBlock is how long a test's read waits for wakes: a millisecond on
// one Redis, whose blocking read sees every wake queued before it; on a
// Cluster, past a round over every stream, since a bell's ring may come a
// little after the reply of the script that queued the wake
// (store/bell.go).
func wakeBlock(rdb redis.UniversalClient) time.Duration {
	if _, ok := rdb.(*redis.ClusterClient); ok {
		return time.Second
	}
	return time.Millisecond
}

// wakes reads every new wake for node (waiting wakeBlock when none).
func (e *env) wakes(t testing.TB, node string) []store.Wake {
	t.Helper()
	ws, err := e.s.ReadWakes(e.ctx, node, []string{engine}, 100, wakeBlock(e.rdb))
	if err != nil {
		t.Fatalf("ReadWakes(%s): %v", node, err)
	}
	return ws
}

// wake reads the one wake of pid, failing when there is not exactly one.
func (e *env) wake(t testing.TB, pid string) store.Wake {
	t.Helper()
	ws := e.wakes(t, "n1")
	if len(ws) != 1 || ws[0].PID != pid {
		t.Fatalf("wakes = %+v, want one of %s", ws, pid)
	}
	return ws[0]
}

// claim reads the wake of pid and claims it on node n1.
func (e *env) claim(t testing.TB, pid, turn string) *store.Claim {
	t.Helper()
	c, err := e.s.Claim(e.ctx, e.wake(t, pid), "n1", turn)
	if err != nil {
		t.Fatalf("Claim(%s): %v", pid, err)
	}
	return c
}

func (e *env) commit(t testing.TB, c *store.Claim, ev lifecycle.Event, events ...conversation.Event) store.Record {
	t.Helper()
	r, err := e.s.Commit(e.ctx, c, events, ev, "model", nil)
	if err != nil {
		t.Fatalf("Commit(%s, %s): %v", c.Record.ID, ev, err)
	}
	return r
}

func (e *env) transition(t testing.TB, pid string, ev lifecycle.Event) store.Record {
	t.Helper()
	_, r, err := e.s.Transition(e.ctx, pid, ev, "operator:bob")
	if err != nil {
		t.Fatalf("Transition(%s, %s): %v", pid, ev, err)
	}
	return r
}

// wakeEntries counts the wakes of the engine's streams not settled: not
// yet read, or read and not acknowledged. (An acknowledged entry stays in
// its stream until TrimWakes.)
func (e *env) wakeEntries(t testing.TB) int {
	t.Helper()
	n := 0
	for part := range e.partitions {
		stream := store.WakeStream(e.partitions, part, engine)
		from := "-"
		groups, err := e.rdb.XInfoGroups(e.ctx, stream).Result()
		if err != nil && !redis.HasErrorPrefix(err, "no such key") {
			t.Fatal(err)
		}
		for _, g := range groups {
			from = "(" + g.LastDeliveredID
		}
		unread, err := e.rdb.XRange(e.ctx, stream, from, "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		n += len(unread)
	}
	for _, p := range e.pendingWakes(t) {
		n += int(p)
	}
	return n
}

// pendingWakes counts the wakes read and not settled, per consumer.
func (e *env) pendingWakes(t testing.TB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for part := range e.partitions {
		p, err := e.rdb.XPending(e.ctx, store.WakeStream(e.partitions, part, engine), "nodes").Result()
		if err != nil {
			var rerr redis.Error
			if errors.As(err, &rerr) { // NOGROUP: never read
				continue
			}
			t.Fatal(err)
		}
		for c, n := range p.Consumers {
			out[c] += n
		}
	}
	return out
}

func (e *env) log(t testing.TB, pid string) []conversation.Event {
	t.Helper()
	evs, err := e.s.Log(e.ctx, pid, "", 0)
	if err != nil {
		t.Fatalf("Log(%s): %v", pid, err)
	}
	return evs
}

func (e *env) inbox(t testing.TB, pid string) []string {
	t.Helper()
	msgs, err := e.s.Inbox(e.ctx, pid)
	if err != nil {
		t.Fatalf("Inbox(%s): %v", pid, err)
	}
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

// describe renders events compactly for comparisons: ids and times vary.
func describe(evs []conversation.Event) []string {
	out := []string{}
	for _, e := range evs {
		s := string(e.Type)
		switch {
		case e.StateChange != nil:
			s = fmt.Sprintf("state %s->%s %s by %s", e.StateChange.From, e.StateChange.To, e.StateChange.Event, e.By)
		case e.InboxMessage != nil:
			s = fmt.Sprintf("inbox %s %s %q", e.InboxMessage.Kind, e.InboxMessage.From, e.InboxMessage.Content)
		case e.TurnStart != nil:
			s = "turn_start " + e.TurnStart.Reason
		case e.ChatResponse != nil:
			s = fmt.Sprintf("chat %q", e.ChatResponse.Text)
		}
		if e.Turn != "" {
			s += " [" + e.Turn + "]"
		}
		out = append(out, s)
	}
	return out
}

func chat(text string) conversation.Event {
	e := conversation.NewChatMessage(text)
	e.By = "model"
	return e
}

// processIn returns a new process brought into state: BLOCKED (fresh),
// READY (a turn ended with continue: idle, not queued), RUNNING (claimed
// by n1), PAUSED (from BLOCKED), DONE, FAILED.
func (e *env) processIn(t testing.TB, id string, state lifecycle.State) string {
	t.Helper()
	switch state {
	case lifecycle.Blocked:
		e.create(t, id, nil)
	case lifecycle.Ready, lifecycle.Running, lifecycle.Failed:
		in := user("start")
		e.create(t, id, &in)
		c := e.claim(t, id, "t0")
		switch state {
		case lifecycle.Ready:
			e.commit(t, c, lifecycle.Continue)
		case lifecycle.Failed:
			e.commit(t, c, lifecycle.Fail)
		}
	case lifecycle.Paused:
		e.create(t, id, nil)
		e.transition(t, id, lifecycle.Pause)
	case lifecycle.Done:
		e.create(t, id, nil)
		e.transition(t, id, lifecycle.Finish)
	default:
		t.Fatalf("processIn: state %s", state)
	}
	if got := e.get(t, id).Status.State; got != state {
		t.Fatalf("processIn(%s): state %s", state, got)
	}
	return id
}

// advance moves the clock on by d.
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
