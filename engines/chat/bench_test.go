package chat

import (
	"context"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

// BenchmarkTurn measures the orchestration of one turn — one tool round plus
// respond — with a scripted model and no I/O.
func BenchmarkTurn(b *testing.B) {
	r := &recipes.Recipe{
		Name:       "bench",
		Tools:      []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}},
		Validation: recipes.Validation{Enabled: true},
	}
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "orders"}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "There are 3 open orders."}}}},
	}}}}
	e := &Engine{}
	turn := Turn{
		ID:     "t1",
		Recipe: r,
		Model:  scripted.New(script).WithoutRecording(),
		Tools:  testRegistry(b, r),
		Inbox:  []conversation.Event{conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "How many open orders?")},
	}
	var discard CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		t := turn
		if _, err := e.Run(ctx, &t, discard); err != nil {
			b.Fatal(err)
		}
	}
}
