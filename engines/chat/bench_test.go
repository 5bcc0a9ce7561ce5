package chat

import (
	"context"
	"fmt"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// BenchmarkTurn measures the orchestration of one turn — one tool round plus
// respond — with a scripted model and no I/O.
func BenchmarkTurn(b *testing.B) {
	r := &recipes.Recipe{
		Name:       "bench",
		Tools:      []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}},
		Validation: recipes.Validation{Enabled: new(true)},
	}
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "orders"}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "There are 3 open orders."}}}},
	}}}}
	e := &Engine{}
	turn := engines.Turn{
		ID:     "t1",
		Recipe: r,
		Model:  scripted.New(script).WithoutRecording(),
		Tools:  testRegistry(b, r),
		Current: []conversation.Event{
			conversation.NewTurnStart("wake"),
			conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "How many open orders?"),
		},
	}
	var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
	ctx := context.Background()
	// The cost grows with the log the model is shown: a turn after a
	// history of n earlier events.
	for _, n := range []int{0, 50, 200} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			turn.History, turn.HistoryView = history(n), nil
			b.ReportAllocs()
			for b.Loop() {
				t := turn
				if _, err := e.Run(ctx, &t, discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// A node keeps the history's provider view from turn to turn.
	b.Run("history=200,kept view", func(b *testing.B) {
		turn.History = history(200)
		turn.HistoryView = conversation.ProviderView(turn.History)
		b.ReportAllocs()
		for b.Loop() {
			t := turn
			if _, err := e.Run(ctx, &t, discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// history returns n events of earlier exchanges: a user message, then the
// model's respond call and its result.
func history(n int) []conversation.Event {
	var evs []conversation.Event
	for i := 0; len(evs) < n; i++ {
		id := fmt.Sprintf("h%d", i)
		evs = append(evs,
			conversation.NewInboxMessage(id, conversation.KindUser, "user:ada", "an earlier question"),
			conversation.NewToolCallRequest(id, "respond", []byte(`{"message":"an earlier answer"}`)),
			conversation.NewToolCallResponse(id, "respond", tools.RespondResult(tools.RespondArgs{Message: "an earlier answer", AwaitingUserInput: true}).Content, false),
		)
	}
	return evs[:n]
}
