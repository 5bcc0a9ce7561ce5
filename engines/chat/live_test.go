package chat

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

// A running turn shows its progress: each round's start, the tools it runs,
// the model's text (to the operator: in respond mode it is the model
// thinking aloud) and respond's message as its arguments stream, in order
// and whole; never a tool's arguments.
func TestProgress(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}}}
	message := "Here is what I found: the café opens at 9 \"sharp\", every day — even Sundays."
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Text: "Let me look that up for you.", Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "secret query"}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": message, "awaiting_user_input": true}}}},
	}}}}
	turn := oneTurn(t, r, scripted.New(script))
	var got []live.Update
	turn.Progress = live.SinkFunc(func(u live.Update) { got = append(got, u) })
	if _, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil })); err != nil {
		t.Fatal(err)
	}

	var kinds []string
	text, answer := map[int]string{}, ""
	for _, u := range got {
		if u.Turn != "t1" || u.At.IsZero() {
			t.Errorf("update %+v: want turn t1 and a time", u)
		}
		if strings.Contains(u.Delta, "secret query") {
			t.Errorf("update %+v shows a tool's arguments", u)
		}
		switch u.Kind {
		case live.Text:
			if u.User || u.Offset != len(text[u.Round]) {
				t.Errorf("text update %+v: want it for the operator alone, at offset %d", u, len(text[u.Round]))
			}
			text[u.Round] += u.Delta
			continue
		case live.Answer:
			if !u.User || u.Offset != len(answer) || u.Round != 2 {
				t.Errorf("answer update %+v: want it for the user, at offset %d, of round 2", u, len(answer))
			}
			answer += u.Delta
			continue
		}
		kinds = append(kinds, string(u.Kind)+" "+u.Tool)
	}
	if want := []string{"round_started ", "tool_started lookup", "tool_finished lookup", "round_started "}; strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("updates = %q, want %q", kinds, want)
	}
	if text[1] != "Let me look that up for you." {
		t.Errorf("round 1's text = %q", text[1])
	}
	if answer != message {
		t.Errorf("the answer as it streamed = %q, want %q", answer, message)
	}
	if n := strings.Count(strings.Join(kinds, ","), "round_started"); n != 2 {
		t.Errorf("%d rounds started, want 2", n)
	}
}
