package store_test

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// BenchmarkPost measures one Post: a script run, one round trip.
func BenchmarkPost(b *testing.B) {
	b.Run("READY queued", func(b *testing.B) {
		e := setup(b)
		in := user("hi")
		e.create(b, "p1", &in)
		// The inbox grows with every post: a limit it never reaches, so
		// that the check is measured and no post refused.
		s, err := store.New(e.rdb, store.Config{Clock: e.clock.now, InboxLimit: math.MaxInt32})
		if err != nil {
			b.Fatal(err)
		}
		m := user("more")
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := s.Post(e.ctx, "p1", m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("BLOCKED process_event", func(b *testing.B) {
		e := setup(b)
		e.create(b, "p1", nil)
		m := msg(conversation.KindProcessEvent, "p_w", "result")
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := e.s.Post(e.ctx, "p1", m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTurn measures a simple turn as a node runs it: Claim (drain of
// one message), one Checkpoint, Commit; three round trips. Each iteration
// takes a fresh process, so the log the claim returns stays small.
func BenchmarkTurn(b *testing.B) {
	e := setup(b)
	for i := range b.N {
		in := user("hello")
		if _, err := e.s.Create(e.ctx, store.NewProcess{ID: fmt.Sprintf("p%d", i), Recipe: "r", Engine: engine, Input: &in}); err != nil {
			b.Fatal(err)
		}
	}
	var wakes []store.Wake
	for len(wakes) < b.N {
		ws, err := e.s.ReadWakes(e.ctx, "n1", []string{engine}, 1000, time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		wakes = append(wakes, ws...)
	}
	round := []conversation.Event{chat("thinking")}
	answer := []conversation.Event{chat("hello to you")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		c, err := e.s.Claim(e.ctx, wakes[i], "n1", "t1")
		if err != nil {
			b.Fatal(err)
		}
		if err := e.s.Checkpoint(e.ctx, c, round); err != nil {
			b.Fatal(err)
		}
		if _, err := e.s.Commit(e.ctx, c, answer, lifecycle.AwaitUser, "model", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurnServerCPU measures what simple turns cost the Redis server,
// script by script, made as a node's concurrent turns make them: 400
// BLOCKED processes, 16 goroutines at a time, every process one turn per
// iteration — a user message (Post), its wake read, Claim, a Checkpoint of
// a tool round, Commit of the answer. It reports the server's CPU time
// (INFO cpu of the benchmark's own redis-server) per turn for each step;
// ns/op is the wall time of an iteration (400 turns). Lua changes show
// here first.
func BenchmarkTurnServerCPU(b *testing.B) {
	const processes, goroutines = 400, 16
	e := setup(b)
	pids := make([]string, processes)
	for i := range pids {
		pids[i] = fmt.Sprintf("p%d", i)
		e.create(b, pids[i], nil)
	}
	// What a node keeps of each process: the last event id it has and the
	// record its last commit returned.
	known := make(map[string]string)
	kept := make(map[string]*store.Record)
	var mu sync.Mutex
	all := func(n int, f func(i int) error) {
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := g; i < n; i += goroutines {
					if err := f(i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
	}
	steps := []string{"post", "wake", "claim", "checkpoint", "commit"}
	spent := make(map[string]time.Duration)
	step := func(name string, f func()) {
		before, err := redisinfo.ServerCPU(e.ctx, e.rdb)
		if err != nil {
			b.Fatal(err)
		}
		f()
		after, err := redisinfo.ServerCPU(e.ctx, e.rdb)
		if err != nil {
			b.Fatal(err)
		}
		spent[name] += after - before
	}
	round := []conversation.Event{
		conversation.NewToolCallRequest("c1", "tell_user", []byte(`{"message":"Working on it."}`)),
		conversation.NewToolCallResponse("c1", "tell_user", []conversation.Block{
			conversation.MarkdownBlock("Working on it.").For(conversation.RoleUser),
			conversation.TextBlock("Message shown to user.").For(conversation.RoleAssistant)}, false),
	}
	answer := []conversation.Event{conversation.NewToolCallRequest("c2", "respond", []byte(`{"message":"Done.","awaiting_user_input":true}`))}
	turns := 0
	for b.Loop() {
		step("post", func() {
			all(processes, func(i int) error {
				_, _, err := e.s.Post(e.ctx, pids[i], user(fmt.Sprintf("message %d", turns)))
				return err
			})
		})
		var wakes []store.Wake
		step("wake", func() {
			for len(wakes) < processes {
				ws, err := e.s.ReadWakes(e.ctx, "n1", []string{engine}, processes, time.Millisecond)
				if err != nil {
					b.Fatal(err)
				}
				wakes = append(wakes, ws...)
			}
		})
		claims := make([]*store.Claim, len(wakes))
		step("claim", func() {
			all(len(wakes), func(i int) error {
				mu.Lock()
				after, rec := known[wakes[i].PID], kept[wakes[i].PID]
				mu.Unlock()
				c, err := e.s.ClaimAfter(e.ctx, wakes[i], "n1", fmt.Sprintf("t%d", turns), after, rec)
				claims[i] = c
				return err
			})
		})
		step("checkpoint", func() {
			all(len(claims), func(i int) error { return e.s.Checkpoint(e.ctx, claims[i], round) })
		})
		step("commit", func() {
			all(len(claims), func(i int) error {
				c := claims[i]
				rec, err := e.s.Commit(e.ctx, c, answer, lifecycle.AwaitUser, "model", nil)
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				kept[c.Wake.PID] = &rec
				known[c.Wake.PID] = ""
				if c.Gapless && len(c.Appended) > 0 {
					known[c.Wake.PID] = c.Appended[len(c.Appended)-1].ID
				}
				return nil
			})
		})
		turns += processes
	}
	var total time.Duration
	for _, name := range steps {
		total += spent[name]
		b.ReportMetric(float64(spent[name].Microseconds())/float64(turns), name+"-µs/turn")
	}
	b.ReportMetric(float64(total.Microseconds())/float64(turns), "server-µs/turn")
}
