package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/store"
)

//go:embed demo.yaml
var demoScript []byte

// demoTimeout bounds the whole demo; it takes well under a second.
const demoTimeout = 30 * time.Second

// runDemo plays the delegation scenario on an in-memory Redis with the
// built-in recipes and a scripted model, printing each turn as it commits.
func runDemo(ctx context.Context, log *zap.Logger, stdout, stderr io.Writer) int {
	if err := demo(ctx, log, stdout); err != nil {
		fmt.Fprintf(stderr, "brain demo: %v\n", err)
		return 1
	}
	return 0
}

func demo(ctx context.Context, log *zap.Logger, w io.Writer) error {
	mr := miniredis.NewMiniRedis()
	mr.ClockTTL(true) // leases expire in real time
	if err := mr.Start(); err != nil {
		return err
	}
	defer mr.Close()
	log.Info("using an embedded in-memory Redis: state is in memory and lost on exit")
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	script, err := scripted.Parse(demoScript)
	if err != nil {
		return err
	}
	// Turns of two processes commit on two goroutines, and their OnCommit
	// calls race: the turns are kept and printed at the end in the order
	// they started (demoTurns), which is the order of the scenario.
	var mu sync.Mutex
	var turns demoTurns
	arthurDone := make(chan struct{}, 1)
	var arthur string
	node, err := brain.New(brain.Config{
		Redis:    rdb,
		NodeID:   "demo",
		LeaseTTL: 5 * time.Second,
		Models:   map[string]llm.Model{"default": scripted.New(script)},
		Logger:   log,
		OnCommit: func(rec store.Record, events []conversation.Event) {
			mu.Lock()
			defer mu.Unlock()
			turns.add(rec, events)
			if rec.ID == arthur && rec.Status.State == lifecycle.Blocked {
				arthurDone <- struct{}{}
			}
		},
	})
	if err != nil {
		return err
	}
	if err := node.Start(ctx); err != nil {
		return err
	}
	defer node.Stop(context.WithoutCancel(ctx))

	question := "Which is older, Go, Python or Rust, and how are they typed?"
	mu.Lock()
	rec, err := node.Create(ctx, brain.NewProcess{Recipe: "arthur", Input: question, Owner: "demo"})
	if err == nil {
		arthur = rec.ID
		fmt.Fprintf(w, "created arthur (%s), state %s\nuser: %s\n", rec.ID, rec.Status, question)
	}
	mu.Unlock()
	if err != nil {
		return err
	}

	timer := time.NewTimer(demoTimeout)
	defer timer.Stop()
	select {
	case <-arthurDone:
		// A turn's OnCommit runs after its commit, so the one of a turn
		// that woke arthur may still be under way: Stop waits for every
		// turn to return.
		if err := node.Stop(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		mu.Lock()
		turns.write(w)
		mu.Unlock()
	case <-timer.C:
		return fmt.Errorf("arthur did not answer within %s", demoTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	fmt.Fprintf(w, "\n== the user view of arthur (%s)\n", arthur)
	evs, err := node.Store().Log(ctx, arthur, "", 0)
	if err != nil {
		return err
	}
	writeTranscript(w, evs)
	return nil
}
