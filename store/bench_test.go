package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// BenchmarkPost measures one Post: a script run, one round trip.
func BenchmarkPost(b *testing.B) {
	b.Run("READY queued", func(b *testing.B) {
		e := setup(b)
		in := user("hi")
		e.create(b, "p1", &in)
		m := user("more")
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := e.s.Post(e.ctx, "p1", m); err != nil {
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
