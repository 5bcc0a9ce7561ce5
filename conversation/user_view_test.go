package conversation

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUserView(t *testing.T) {
	t.Parallel()
	presentation := Event{Type: TypePresentation, Presentation: &Presentation{CallID: "c9", Summary: "Two sources.", Markdown: "| a |\n|---|\n| 1 |"}}
	tests := []struct {
		name   string
		events []Event
		want   []Event
	}{
		{
			name:   "empty log",
			events: nil,
			want:   []Event{},
		},
		{
			name: "turn starts and user messages pass; other inbox kinds do not",
			events: []Event{
				stamp(NewTurnStart("wake"), "1-0", "node:n1"),
				stamp(NewInboxMessage("m1", KindUser, "user:alice", "hi"), "1-1", "user:alice"),
				NewInboxMessage("m2", KindOperator, "operator:bob", "Be brief."),
				NewInboxMessage("m3", KindProcessEvent, "proc-42", "done"),
				NewInboxMessage("m4", KindSchedule, "", "tick"),
				NewInboxMessage("m5", KindSystem, "", "resumed"),
			},
			want: []Event{
				stamp(NewTurnStart("wake"), "1-0", "node:n1"),
				stamp(NewInboxMessage("m1", KindUser, "user:alice", "hi"), "1-1", "user:alice"),
			},
		},
		{
			name: "message and structured answers pass; reasoning is dropped",
			events: []Event{
				NewReasoning("secret thoughts", "sig", nil),
				stamp(NewChatMessage("Here it is."), "2-0", "model"),
				NewStructured(json.RawMessage(`{"n":1}`)),
			},
			want: []Event{
				stamp(NewChatMessage("Here it is."), "2-0", "model"),
				NewStructured(json.RawMessage(`{"n":1}`)),
			},
		},
		{
			name: "tell_user pair: request dropped, result reduced to the message",
			events: []Event{
				NewToolCallRequest("c1", "tell_user", json.RawMessage(`{"message":"Phase 1 done."}`)),
				stamp(tellUser("c1", "Phase 1 done."), "3-0", "node:n1"),
			},
			want: []Event{
				stamp(NewToolCallResponse("c1", "tell_user", []Block{MarkdownBlock("Phase 1 done.").For(RoleUser)}, false), "3-0", "node:n1"),
			},
		},
		{
			name: "tool pairs without user blocks are dropped",
			events: []Event{
				NewToolCallRequest("c1", "ack", nil),
				NewToolCallResponse("c1", "ack", []Block{TextBlock("ok").For(RoleAssistant)}, false),
				NewToolCallRequest("c2", "noop", nil),
				NewToolCallResponse("c2", "noop", nil, false),
			},
			want: []Event{},
		},
		{
			name: "unannotated blocks pass, with the error flag",
			events: []Event{
				NewToolCallResponse("c1", "mcp", []Block{TextBlock("plain"), TextBlock("both").For(RoleAssistant, RoleUser), TextBlock("model only").For(RoleAssistant)}, true),
			},
			want: []Event{
				NewToolCallResponse("c1", "mcp", []Block{TextBlock("plain"), TextBlock("both").For(RoleAssistant, RoleUser)}, true),
			},
		},
		{
			name: "presentations pass; corrections, state changes, hosted activity and unknown types do not",
			events: []Event{
				NewValidationCorrection("data_relay", 1, "Relay the data."),
				NewStateChange("RUNNING", "BLOCKED", "await_user"),
				{Type: TypeHostedActivity, HostedActivity: &HostedActivity{ActivityID: "a", Name: "web_search", State: ActivityStarted}},
				presentation,
				{Type: "hologram"},
			},
			want: []Event{presentation},
		},
		{
			name: "notices people are told of pass with a short text, code kept; the operator's text stays in the log; an engine's own notice does not pass",
			events: []Event{
				stamp(NewSystemNotice("model_error", "The model call failed: openai: 429 rate limited (key sk-…)"), "1-2", "engine"),
				NewSystemNotice("max_rounds", "The turn reached 20 rounds."),
				NewSystemNotice("head_failed", "head skeptic: the model call failed: 503"),
			},
			want: []Event{
				stamp(NewSystemNotice("model_error", "Something went wrong while answering, so this turn ended without an answer. Please try again later."), "1-2", "engine"),
				NewSystemNotice("max_rounds", "This turn took too many steps and stopped before it finished."),
			},
		},
		{
			name: "an approval request shows the user the calls they may decide; decisions and approval messages are not shown",
			events: []Event{
				NewApprovalRequested([]PendingCall{
					{CallID: "c1", Name: "pay", By: ApproverUser, Key: "t/0"},
					{CallID: "c2", Name: "deploy", By: ApproverOperator, Key: "t/1"},
				}),
				NewApprovalRequested([]PendingCall{{CallID: "c3", Name: "deploy", By: ApproverOperator, Key: "t/2"}}),
				NewInboxMessage("m1", KindApproval, "user:ada", `{"call_id":"c1","decision":"approve"}`),
				NewApprovalDecided(ApprovalDecision{CallID: "c1", Decision: Approve}),
			},
			want: []Event{NewApprovalRequested([]PendingCall{{CallID: "c1", Name: "pay", By: ApproverUser, Key: "t/0"}})},
		},
		{
			name:   "malformed events are dropped, not fatal",
			events: []Event{{Type: TypeInboxMessage}, {Type: TypeChatResponse}, {Type: TypeToolCallResponse}},
			want:   []Event{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := UserView(tt.events)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("UserView (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUserViewDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	events := []Event{
		tellUser("c1", "Phase 1 done."),
		NewToolCallResponse("c2", "plain", []Block{TextBlock("x")}, false),
	}
	before := cloneEvents(t, events)

	view := UserView(events)
	if diff := cmp.Diff(before, events); diff != "" {
		t.Fatalf("UserView modified its input (-before +after):\n%s", diff)
	}
	if view[0].ToolCallResponse == events[0].ToolCallResponse {
		t.Error("a reduced event shares its payload with the input")
	}
	view[0].ToolCallResponse.Content[0].Text = "changed"
	view[0].ToolCallResponse.Content = append(view[0].ToolCallResponse.Content, TextBlock("more"))
	view[0].ID = "changed"
	if diff := cmp.Diff(before, events); diff != "" {
		t.Errorf("changing the view changed the input (-before +after):\n%s", diff)
	}
}

// cloneEvents deep-copies events through JSON.
func cloneEvents(t *testing.T, events []Event) []Event {
	t.Helper()
	data, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	var out []Event
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAudienceNeverLeaks checks, on a log mixing every audience, that no
// block addressed only to the user reaches the model and no block addressed
// only to the assistant reaches a person.
func TestAudienceNeverLeaks(t *testing.T) {
	t.Parallel()
	events := append(benchLog(),
		NewToolCallResponse("x1", "mcp", []Block{
			TextBlock("USER-ONLY-1").For(RoleUser),
			TextBlock("ASSISTANT-ONLY-1").For(RoleAssistant),
			TextBlock("EVERYONE-1"),
		}, false),
		NewToolCallResponse("x2", "mcp", []Block{
			ResourceBlock(Resource{URI: "file:///u", Text: "USER-ONLY-2"}).For(RoleUser),
			ImageBlock("image/png", "ASSISTANT-ONLY-2").For(RoleAssistant),
		}, true),
	)
	// The content of every block addressed to one audience only.
	only := map[Role][]string{}
	for _, e := range events {
		if e.ToolCallResponse == nil {
			continue
		}
		for _, b := range e.ToolCallResponse.Content {
			data, err := json.Marshal(b.For()) // without its annotations
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !b.ForAssistant():
				only[RoleUser] = append(only[RoleUser], string(data))
			case !b.ForUser():
				only[RoleAssistant] = append(only[RoleAssistant], string(data))
			}
		}
	}
	if len(only[RoleUser]) < 3 || len(only[RoleAssistant]) < 3 {
		t.Fatalf("the log does not mix audiences enough: %v", only)
	}

	for _, m := range ProviderView(events) {
		for _, b := range m.Content {
			data, _ := json.Marshal(b.For())
			if !b.ForAssistant() || slices.Contains(only[RoleUser], string(data)) {
				t.Errorf("a block for the user only reached the model in %s message: %s", m.Role, data)
			}
		}
	}

	sawEveryone := false
	for _, e := range UserView(events) {
		r := e.ToolCallResponse
		if r == nil {
			continue
		}
		for _, b := range r.Content {
			data, _ := json.Marshal(b.For())
			if !b.ForUser() || slices.Contains(only[RoleAssistant], string(data)) {
				t.Errorf("a block for the assistant only reached a person in %s: %s", r.CallID, data)
			}
			sawEveryone = sawEveryone || b.Text == "EVERYONE-1"
		}
	}
	if !sawEveryone {
		t.Error("an unannotated block did not reach the user view")
	}
}
