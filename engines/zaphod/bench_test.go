package zaphod

import (
	"context"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

// benchRecipe is a panel of three heads, each answering in one round, and
// a synthesis that responds.
func benchRecipe() (*recipes.Recipe, *scripted.Script) {
	r := &recipes.Recipe{
		Name:  "bench",
		Tools: []recipes.ToolRef{{Name: "respond"}},
		Heads: []recipes.Head{
			{Name: "optimist", SystemPrompt: "You are the optimist."},
			{Name: "skeptic", SystemPrompt: "You are the skeptic."},
			{Name: "pragmatist", SystemPrompt: "You are the pragmatist."},
		},
		Synthesis: recipes.Synthesis{SystemPrompt: "You compose the panel's answers."},
	}
	respond := []scripted.Call{{Name: "respond", Args: map[string]any{"message": "An answer."}}}
	s := &scripted.Script{Turns: []scripted.Turn{
		{System: "You are the optimist.", Rounds: []scripted.Round{{Text: "Yes."}}},
		{System: "You are the skeptic.", Rounds: []scripted.Round{{Text: "No."}}},
		{System: "You are the pragmatist.", Rounds: []scripted.Round{{Calls: respond}}},
		{System: "You compose", Rounds: []scripted.Round{{Calls: respond}}},
	}}
	return r, s
}

// BenchmarkTurn measures the orchestration of one zaphod turn of three
// heads and a synthesis with zero-latency scripted models and no I/O;
// "chat" is a chat turn of one respond round on the same model, the cost
// each head and the synthesis would have alone. ns/head is the turn's
// cost per head; overhead-ns/head what it costs beyond four such chat
// turns (three heads, a synthesis), per head: goroutines, checkpoints of
// answers, the panel shown to the synthesis.
func BenchmarkTurn(b *testing.B) {
	r, s := benchRecipe()
	turn := engines.Turn{
		ID:     "t1",
		Recipe: r,
		Model:  scripted.New(s).WithoutRecording(),
		Tools:  testRegistry(b, r),
		Current: []conversation.Event{
			conversation.NewTurnStart("wake"),
			conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "Ship on Friday?"),
		},
	}
	var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
	ctx := context.Background()
	var chatNs float64
	b.Run("chat", func(b *testing.B) {
		cr := *r
		cr.SystemPrompt = "You compose the panel's answers."
		e := &chat.Engine{}
		b.ReportAllocs()
		for b.Loop() {
			t := turn
			t.Recipe = &cr
			if _, err := e.Run(ctx, &t, discard); err != nil {
				b.Fatal(err)
			}
		}
		chatNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("zaphod=3", func(b *testing.B) {
		e := &Engine{}
		b.ReportAllocs()
		for b.Loop() {
			t := turn
			out, err := e.Run(ctx, &t, discard)
			if err != nil {
				b.Fatal(err)
			}
			if len(answers(out.Events)) != 3 {
				b.Fatalf("got %d answers", len(answers(out.Events)))
			}
		}
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(ns/3, "ns/head")
		if chatNs > 0 {
			b.ReportMetric((ns-4*chatNs)/3, "overhead-ns/head")
		}
	})
}
