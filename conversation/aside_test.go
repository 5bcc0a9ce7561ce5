package conversation

import (
	"testing"
)

// A head's events (By "head:NAME") are the engine's: a head's tool call,
// its result (even one with blocks for the user), its usage and its answer
// reach neither the model of a later call nor the user, and do not split
// the assistant message they fall within; the same events by the model
// and a tool are shown.
func TestAsideEventsAreNotViewed(t *testing.T) {
	t.Parallel()
	head := func(e Event) Event { e.By = ByHead + "optimist"; return e }
	result := NewToolCallResponse("h1", "lookup", []Block{TextBlock("data").For(RoleUser), TextBlock("data")}, false)
	answer := NewChatMessage("Yes.")
	answer.ChatResponse.Audience = []Role{"engine"}
	events := []Event{
		NewInboxMessage("1-0", KindUser, "user:ada", "Ship?"),
		head(NewToolCallRequest("h1", "lookup", []byte(`{"query":"x"}`))),
		head(result),
		head(answer),
		NewChatMessage("Let me look."),
		head(NewToolCallRequest("h2", "lookup", []byte(`{}`))), // between two parts of one response
		NewToolCallRequest("c1", "respond", []byte(`{"message":"Ship."}`)),
	}
	events[4].ChatResponse.Audience = []Role{RoleAssistant}
	view := ProviderView(events)
	if len(view) != 2 || view[0].Role != MessageUser || view[1].Role != MessageAssistant {
		t.Fatalf("provider view = %+v, want the user's message and one assistant message", view)
	}
	if calls := view[1].ToolCalls; len(calls) != 1 || calls[0].ID != "c1" {
		t.Errorf("the assistant message's calls = %+v, want respond's alone", calls)
	}
	if got, ok := ProviderViewAppend(ProviderView(events[:1]), events[1:4]); !ok || len(got) != 1 {
		t.Errorf("ProviderViewAppend of a head's events = %+v, %v; want the user's message alone", got, ok)
	}
	for _, e := range UserView(events) {
		if e.Aside() {
			t.Errorf("the user view shows a head's event: %+v", e)
		}
	}
	shown := result
	shown.By = "tool:lookup"
	if len(UserView([]Event{shown})) != 1 {
		t.Errorf("the user view leaves out a tool's result for the user: the test shows nothing")
	}
}
