package zaphod

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// Two heads' tool calls run under call keys of their own (the turn's id
// and the head's name), so that a tool that keys its effect by the call
// (spawn_worker, schedule_wakeup) runs once per head's call, not once for
// the first call of every head; the synthesis's calls keep the turn's.
func TestHeadsCallKeys(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	note := tools.Func{
		Def: tools.Definition{Name: "note", Description: "Notes.", Schema: json.RawMessage(`{"type":"object"}`)},
		Fn: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
			c, _ := tools.CallerFrom(ctx)
			mu.Lock()
			keys = append(keys, c.CallKey)
			mu.Unlock()
			return tools.TextResult("noted"), nil
		},
	}
	reg, err := tools.NewRegistry(note, tools.RespondTool())
	if err != nil {
		t.Fatal(err)
	}
	noteCall := []scripted.Call{{Name: "note"}}
	respond := []scripted.Call{{Name: "respond", Args: map[string]any{"message": "Done."}}}
	s := &scripted.Script{Turns: []scripted.Turn{
		{System: "You are a.", Rounds: []scripted.Round{{Calls: noteCall}, {Text: "A."}}},
		{System: "You are b.", Rounds: []scripted.Round{{Calls: noteCall}, {Text: "B."}}},
		{System: "Compose.", Rounds: []scripted.Round{{Calls: noteCall}, {Calls: respond}}},
	}}
	r := &recipes.Recipe{Name: "keys", Engine: recipes.EngineZaphod,
		Heads:     []recipes.Head{{Name: "a", SystemPrompt: "You are a."}, {Name: "b", SystemPrompt: "You are b."}},
		Synthesis: recipes.Synthesis{SystemPrompt: "Compose."}}
	ctx := tools.WithCaller(context.Background(), tools.Caller{ProcessID: "p1"})
	var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
	if _, err := (&Engine{}).Run(ctx, &engines.Turn{ID: "t1", Recipe: r, Model: scripted.New(s), Tools: reg,
		Current: []conversation.Event{conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "Go?")}}, discard); err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if want := []string{"t1/0", "t1/a/0", "t1/b/0"}; !slices.Equal(keys, want) {
		t.Errorf("call keys %v, want %v", keys, want)
	}
}
