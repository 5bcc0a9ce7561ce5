package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/internal/testutil"
)

// gate is a client hook that records the pipelines of INCR commands and
// holds each until the test lets it go.
type gate struct {
	mu        sync.Mutex
	pipelines [][]string // the commands of each pipeline, by name and first argument
	open      chan struct{}
}

func (g *gate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var names []string
		for _, c := range cmds {
			if c.Name() != "incr" {
				return next(ctx, cmds) // a new connection's handshake
			}
			names = append(names, fmt.Sprint(c.Args()[1]))
		}
		g.mu.Lock()
		g.pipelines = append(g.pipelines, names)
		g.mu.Unlock()
		<-g.open
		return next(ctx, cmds)
	}
}

func (g *gate) sent() [][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]string(nil), g.pipelines...)
}

// waitFor yields until cond holds; the goroutines it waits for need only
// to run, not time to pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1_000_000 {
		if cond() {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("never: %s", what)
}

// TestBatcher checks that calls made while the pipelines are busy go out
// together in the next one, each with its own reply or error, the commands
// of one call one after the other, and that a call whose context ended
// while it waited is not sent.
func TestBatcher(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testutil.Redis(t)
	if err := rdb.Set(ctx, "text", "not a number", 0).Err(); err != nil {
		t.Fatal(err)
	}
	g := &gate{open: make(chan struct{})}
	rdb.AddHook(g)
	b := newBatcher(rdb, 0, 0)

	type result struct {
		key string
		n   int64
		err error
	}
	results := make(chan result, 16)
	incr := func(ctx context.Context, key string, then ...redis.Cmder) {
		cmd := redis.NewIntCmd(ctx, "incr", key)
		err := b.do(ctx, append([]redis.Cmder{cmd}, then...)...)
		if err != cmd.Err() {
			t.Errorf("do(incr %s) = %v, but the command says %v", key, err, cmd.Err())
		}
		results <- result{key, cmd.Val(), err}
	}
	// Two calls fill both pipeline slots and are held there.
	go incr(ctx, "first")
	go incr(ctx, "second")
	waitFor(t, "two pipelines in flight", func() bool { return len(g.sent()) == maxPipelines })
	// Five more wait: three counters (one of them two commands), one that
	// fails, one that is given up.
	gaveUp, giveUp := context.WithCancel(ctx)
	go incr(ctx, "a")
	go incr(ctx, "text")
	go incr(gaveUp, "abandoned")
	go func() {
		then := redis.NewIntCmd(ctx, "incr", "b2")
		incr(ctx, "b", then)
		results <- result{"b2", then.Val(), then.Err()}
	}()
	go incr(ctx, "c")
	waitFor(t, "five calls waiting", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.waiting) == 5
	})
	giveUp()
	close(g.open)

	got := map[string]result{}
	for range 8 {
		r := <-results
		got[r.key] = r
	}
	for _, key := range []string{"first", "second", "a", "b", "b2", "c"} {
		if r := got[key]; r.err != nil || r.n != 1 {
			t.Errorf("incr %s = %d, %v; want 1, nil", key, r.n, r.err)
		}
	}
	if r := got["text"]; r.err == nil || !strings.Contains(r.err.Error(), "not an integer") {
		t.Errorf("incr text = %v, want the server's error", r.err)
	}
	if r := got["abandoned"]; !errors.Is(r.err, context.Canceled) {
		t.Errorf("incr abandoned = %v, want context.Canceled", r.err)
	}
	if n, err := rdb.Exists(ctx, "abandoned").Result(); err != nil || n != 0 {
		t.Errorf("the abandoned call was sent: EXISTS = %d, %v", n, err)
	}
	sent := g.sent()
	if len(sent) != 3 || len(sent[2]) != 5 || !strings.Contains(strings.Join(sent[2], " "), "b b2") {
		t.Errorf("pipelines = %q; want the two first calls alone, then the four waiting ones together, b2 right after b", sent)
	}
}

// TestBatcherConnectionError checks that a pipeline that cannot be sent
// gives every call in it the error, and that the batcher serves later
// calls.
func TestBatcherConnectionError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	b := newBatcher(rdb, 0, 0)
	cmd := redis.NewStatusCmd(ctx, "ping")
	if err := b.do(ctx, cmd); err == nil {
		t.Fatal("ping to a closed port: no error")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running != 0 || len(b.waiting) != 0 {
		t.Errorf("after the failed pipeline: %d running, %d waiting; want none", b.running, len(b.waiting))
	}
}
