package conversation

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tellUser is the result of the tell_user tool: the message for the user,
// an acknowledgement for the model.
func tellUser(callID, message string) Event {
	return NewToolCallResponse(callID, "tell_user", []Block{
		MarkdownBlock(message).For(RoleUser),
		TextBlock("Message shown to user.").For(RoleAssistant),
	}, false)
}

func msg(role MessageRole, s string) Message {
	return Message{Role: role, Content: []Block{TextBlock(s)}}
}

func tool(callID, name string, isError bool, blocks ...Block) Message {
	return Message{Role: MessageTool, ToolCallID: callID, ToolName: name, IsError: isError, Content: blocks}
}

func TestProviderView(t *testing.T) {
	t.Parallel()
	sig := &ProviderPayload{Provider: "anthropic", Format: "redacted_thinking", Value: json.RawMessage(`"x"`)}
	searchPayload := &ProviderPayload{Provider: "anthropic", Format: "web_search_tool_result", Value: json.RawMessage(`{"type":"web_search_tool_result"}`)}
	cited := Citation{Source: Source{URL: "https://b.example"}, Range: &Range{Start: 8, End: 26},
		Replay: &ProviderPayload{Provider: "anthropic", Format: "citation", Value: json.RawMessage(`{}`)}}
	movedBy := func(c Citation, n int) Citation {
		c.Range = &Range{Start: c.Range.Start + n, End: c.Range.End + n}
		return c
	}
	tests := []struct {
		name   string
		events []Event
		want   []Message
	}{
		{
			name:   "empty log",
			events: nil,
			want:   []Message{},
		},
		{
			name: "tell_user result reaches the model as the acknowledgement only",
			events: []Event{
				NewToolCallRequest("c1", "tell_user", json.RawMessage(`{"message":"Phase 1 done."}`)),
				tellUser("c1", "Phase 1 done."),
			},
			want: []Message{
				{Role: MessageAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "tell_user", Arguments: json.RawMessage(`{"message":"Phase 1 done."}`)}}},
				tool("c1", "tell_user", false, TextBlock("Message shown to user.").For(RoleAssistant)),
			},
		},
		{
			name:   "all blocks for the user, success: neutral placeholder",
			events: []Event{NewToolCallResponse("c1", "show", []Block{MarkdownBlock("# Report").For(RoleUser), ImageBlock("image/png", "AA==").For(RoleUser)}, false)},
			want:   []Message{tool("c1", "show", false, TextBlock("Tool executed successfully."))},
		},
		{
			name:   "all blocks for the user, failure: Tool failed. and the error flag",
			events: []Event{NewToolCallResponse("c1", "show", []Block{TextBlock("could not render").For(RoleUser)}, true)},
			want:   []Message{tool("c1", "show", true, TextBlock("Tool failed."))},
		},
		{
			name:   "no content at all: placeholder",
			events: []Event{NewToolCallResponse("c1", "noop", nil, false), NewToolCallResponse("c2", "noop", []Block{}, true)},
			want: []Message{
				tool("c1", "noop", false, TextBlock(PlaceholderSuccess)),
				tool("c2", "noop", true, TextBlock(PlaceholderFailure)),
			},
		},
		{
			name:   "unannotated and both-audience blocks pass unchanged",
			events: []Event{NewToolCallResponse("c1", "mcp", []Block{TextBlock("plain"), TextBlock("both").For(RoleUser, RoleAssistant), ImageBlock("image/png", "AA==")}, true)},
			want:   []Message{tool("c1", "mcp", true, TextBlock("plain"), TextBlock("both").For(RoleUser, RoleAssistant), ImageBlock("image/png", "AA=="))},
		},
		{
			name: "one model response is one assistant message",
			events: []Event{
				NewInboxMessage("m1", KindUser, "user:alice", "How big is the repo?"),
				NewReasoning("Count files first.", "sig-1", nil),
				NewReasoning("", "", sig),
				NewChatMessage("Let me count."),
				NewToolCallRequest("c1", "count_files", json.RawMessage(`{"dir":"."}`)),
				NewToolCallRequest("c2", "clock", nil),
				NewToolCallResponse("c1", "count_files", []Block{TextBlock("412")}, false),
				NewToolCallResponse("c2", "clock", []Block{TextBlock("09:26")}, false),
				NewChatMessage("412 files."),
				NewToolCallRequest("c3", "respond", json.RawMessage(`{"message":"412 files."}`)),
			},
			want: []Message{
				msg(MessageUser, "How big is the repo?"),
				{
					Role:      MessageAssistant,
					Content:   []Block{TextBlock("Let me count.")},
					Reasoning: []Reasoning{{Text: "Count files first.", Signature: "sig-1"}, {Payload: sig}},
					ToolCalls: []ToolCall{
						{ID: "c1", Name: "count_files", Arguments: json.RawMessage(`{"dir":"."}`)},
						{ID: "c2", Name: "clock", Arguments: json.RawMessage(`{}`)},
					},
				},
				tool("c1", "count_files", false, TextBlock("412")),
				tool("c2", "clock", false, TextBlock("09:26")),
				{
					Role:      MessageAssistant,
					Content:   []Block{TextBlock("412 files.")},
					ToolCalls: []ToolCall{{ID: "c3", Name: "respond", Arguments: json.RawMessage(`{"message":"412 files."}`)}},
				},
			},
		},
		{
			name: "hosted activity and usage inside a response do not split it; other events do",
			events: []Event{
				NewChatMessage("Searching."),
				{Type: TypeHostedActivity, HostedActivity: &HostedActivity{ActivityID: "ws1", Name: "web_search", State: ActivityStarted}},
				NewModelUsage(ModelUsage{InputTokens: 5, OutputTokens: 2}),
				NewChatMessage("Found it."),
				NewValidationCorrection("no_tool_call", 1, "End your turn with respond."),
				NewChatMessage("Sorry."),
				NewStateChange("RUNNING", "BLOCKED", "await_user"),
				NewStructured(json.RawMessage(`{"ok":true}`)),
				NewSystemNotice("x", "y"),
				NewChatMessage("Again."),
			},
			want: []Message{
				{Role: MessageAssistant, Content: []Block{TextBlock("Searching."), TextBlock("Found it.")},
					Hosted: []HostedActivity{{ActivityID: "ws1", Name: "web_search", State: ActivityStarted, TextAt: 11}}},
				msg(MessageSystem, "End your turn with respond."),
				msg(MessageAssistant, "Sorry."),
				{Role: MessageAssistant, Content: []Block{{Type: BlockText, Text: `{"ok":true}`, MimeType: "application/json"}}},
				msg(MessageAssistant, "Again."),
			},
		},
		{
			name: "a response's hosted activity and citations go with its message, placed in its text; a response with no part sent loses them",
			events: []Event{
				NewModelUsage(ModelUsage{InputTokens: 5, OutputTokens: 2}),
				{Type: TypeHostedActivity, HostedActivity: &HostedActivity{ActivityID: "ws1", Name: "web_search", State: ActivityStarted, TextAt: 7}},
				{Type: TypeHostedActivity, HostedActivity: &HostedActivity{ActivityID: "ws1", Name: "web_search", State: ActivityCompleted, TextAt: 7, Payload: searchPayload}},
				NewReasoning("Think.", "sig", nil),
				NewChatMessage("Before. Brain runs agents.", cited),
				NewToolCallRequest("c1", "respond", json.RawMessage(`{"message":"ok"}`)),
				NewToolCallResponse("c1", "respond", []Block{TextBlock("ok")}, false),
				{Type: TypeHostedActivity, HostedActivity: &HostedActivity{ActivityID: "ws2", Name: "web_search", State: ActivityStarted}},
				NewValidationCorrection("no_tool_call", 1, "End your turn with respond."),
				NewChatMessage("Cut", cited),
				NewChatMessage("Again.", cited),
			},
			want: []Message{
				{
					Role: MessageAssistant, Content: []Block{TextBlock("Before. Brain runs agents.")},
					Reasoning: []Reasoning{{Text: "Think.", Signature: "sig"}},
					ToolCalls: []ToolCall{{ID: "c1", Name: "respond", Arguments: json.RawMessage(`{"message":"ok"}`)}},
					Hosted: []HostedActivity{
						{ActivityID: "ws1", Name: "web_search", State: ActivityStarted, TextAt: 7},
						{ActivityID: "ws1", Name: "web_search", State: ActivityCompleted, TextAt: 7, Payload: searchPayload},
					},
					Citations: []Citation{cited},
				},
				tool("c1", "respond", false, TextBlock("ok")),
				msg(MessageSystem, "End your turn with respond."),
				{
					Role: MessageAssistant, Content: []Block{TextBlock("Cut"), TextBlock("Again.")},
					Citations: []Citation{cited, movedBy(cited, 4)},
				},
			},
		},
		{
			name: "what comes while calls wait for approval is sent after their results; decisions and requests are not sent",
			events: []Event{
				NewToolCallRequest("c1", "lookup", json.RawMessage(`{}`)),
				NewToolCallRequest("c2", "http_fetch", json.RawMessage(`{"url":"u"}`)),
				NewToolCallResponse("c1", "lookup", []Block{TextBlock("found")}, false),
				NewApprovalRequested([]PendingCall{{CallID: "c2", Name: "http_fetch", By: ApproverOperator, Key: "t1/1"}}),
				NewStateChange("RUNNING", "BLOCKED", "await_user"),
				NewTurnStart("wake"),
				NewInboxMessage("m1", KindUser, "user:ada", "Any news?"),
				NewInboxMessage("m2", KindApproval, "operator:bo", `{"call_id":"c2","decision":"approve"}`),
				NewInboxMessage("m3", KindOperator, "operator:bo", "Be quick."),
				NewApprovalDecided(ApprovalDecision{CallID: "c2", Decision: Approve}),
				NewToolCallResponse("c2", "http_fetch", []Block{TextBlock("page")}, false),
				NewChatMessage("Done."),
			},
			want: []Message{
				{Role: MessageAssistant, ToolCalls: []ToolCall{
					{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{}`)},
					{ID: "c2", Name: "http_fetch", Arguments: json.RawMessage(`{"url":"u"}`)},
				}},
				tool("c1", "lookup", false, TextBlock("found")),
				tool("c2", "http_fetch", false, TextBlock("page")),
				msg(MessageUser, "Any news?"),
				msg(MessageUser, "[operator message from operator:bo]\nBe quick."),
				msg(MessageAssistant, "Done."),
			},
		},
		{
			name: "inbox kinds other than user get a header naming the source",
			events: []Event{
				NewInboxMessage("m1", KindUser, "user:alice", "hi"),
				NewInboxMessage("m2", KindOperator, "", "Be brief."),
				NewInboxMessage("m3", KindOperator, "operator:bob", "Be briefer."),
				NewInboxMessage("m4", KindProcessEvent, "proc-42", "Worker done: 3 files."),
				NewInboxMessage("m5", KindSchedule, "", "Daily report time."),
				NewInboxMessage("m6", KindSchedule, "daily-report", "Daily report time."),
				NewInboxMessage("m7", KindSystem, "system", "Resumed after a node failure."),
			},
			want: []Message{
				msg(MessageUser, "hi"),
				msg(MessageUser, "[operator message]\nBe brief."),
				msg(MessageUser, "[operator message from operator:bob]\nBe briefer."),
				msg(MessageUser, "[process_event from proc-42]\nWorker done: 3 files."),
				msg(MessageUser, "[schedule]\nDaily report time."),
				msg(MessageUser, "[schedule from daily-report]\nDaily report time."),
				msg(MessageUser, "[system]\nResumed after a node failure."),
			},
		},
		{
			name: "a message drained while the turn ran says so",
			events: []Event{
				during(NewInboxMessage("m1", KindUser, "user:alice", "Use metric units.")),
				during(NewInboxMessage("m2", KindOperator, "operator:bob", "Stop searching; answer now.")),
			},
			want: []Message{
				msg(MessageUser, "[user message, sent while you were working: take it into account before you go on]\nUse metric units."),
				msg(MessageUser, "[operator message from operator:bob, sent while you were working: take it into account before you go on]\nStop searching; answer now."),
			},
		},
		{
			name: "identical schedule messages drained together are one, with their count",
			events: []Event{
				NewTurnStart("wake"),
				NewInboxMessage("m1", KindSchedule, "daily", "Report time."),
				NewInboxMessage("m2", KindSchedule, "daily", "Report time."),
				NewInboxMessage("m3", KindSchedule, "daily", "Report time."),
				NewInboxMessage("m4", KindSchedule, "weekly", "Report time."),
				NewInboxMessage("m5", KindSchedule, "weekly", "Summary time."),
				NewInboxMessage("m6", KindUser, "user:alice", "hi"),
				NewInboxMessage("m7", KindUser, "user:alice", "hi"),
				NewInboxMessage("m8", KindSchedule, "daily", "Report time."),
				NewTurnStart("wake"), // another drain: counted apart
				NewInboxMessage("m9", KindSchedule, "daily", "Report time."),
				NewInboxMessage("m10", KindSchedule, "daily", "Report time."),
			},
			want: []Message{
				msg(MessageUser, "[schedule from daily, 3 times]\nReport time."),
				msg(MessageUser, "[schedule from weekly]\nReport time."),
				msg(MessageUser, "[schedule from weekly]\nSummary time."),
				msg(MessageUser, "hi"),
				msg(MessageUser, "hi"),
				msg(MessageUser, "[schedule from daily]\nReport time."),
				msg(MessageUser, "[schedule from daily, 2 times]\nReport time."),
			},
		},
		{
			name: "events the model is not sent",
			events: []Event{
				NewTurnStart("wake"),
				NewStateChange("READY", "RUNNING", "wake"),
				NewSystemNotice("max_rounds", "The turn reached 20 rounds."),
				{Type: TypeHostedActivity, HostedActivity: &HostedActivity{ActivityID: "a", Name: "n", State: ActivityFailed}},
				{Type: TypePresentation, Presentation: &Presentation{CallID: "c", Summary: "s", Markdown: "m"}},
				{Type: "hologram"},
			},
			want: []Message{},
		},
		{
			name: "empty responses and malformed events are skipped, not fatal",
			events: []Event{
				NewChatMessage(""),
				NewTurnStart(""),
				NewStructured(nil),
				{Type: TypeInboxMessage},
				{Type: TypeToolCallResponse},
				{Type: TypeValidationCorrection},
				{Type: TypeChatResponse},
			},
			want: []Message{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ProviderView(tt.events)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ProviderView (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessageText(t *testing.T) {
	t.Parallel()
	m := Message{Role: MessageAssistant, Content: []Block{TextBlock("a"), ImageBlock("image/png", "AA=="), TextBlock("b")}}
	if got := m.Text(); got != "a\nb" {
		t.Errorf("Text() = %q, want %q", got, "a\nb")
	}
}

// benchLog is a turn of about 50 events: a user message, rounds of
// reasoning, text and tool calls, audience-split results, a correction.
func benchLog() []Event {
	events := []Event{
		NewTurnStart("wake"),
		NewStateChange("READY", "RUNNING", "wake"),
		NewInboxMessage("m1", KindUser, "user:alice", "Summarise the repository."),
		NewInboxMessage("m2", KindOperator, "operator:bob", "Keep it short."),
	}
	for i := range 8 {
		id := fmt.Sprintf("c%d", i)
		events = append(events,
			NewReasoning("Next I read a file.", "sig", nil),
			NewChatMessage("Reading."),
			NewToolCallRequest(id, "read_file", json.RawMessage(`{"path":"main.go"}`)),
			NewToolCallRequest(id+"u", "tell_user", json.RawMessage(`{"message":"Progress."}`)),
			NewToolCallResponse(id, "read_file", []Block{TextBlock("package main\n\nfunc main() {}\n")}, false),
			tellUser(id+"u", "Progress."),
		)
	}
	return append(events,
		NewChatMessage("Done."),
		NewValidationCorrection("no_tool_call", 1, "End your turn with respond."),
		NewToolCallRequest("r", "respond", json.RawMessage(`{"message":"A small Go program."}`)),
		NewToolCallResponse("r", "respond", []Block{MarkdownBlock("A small Go program.").For(RoleUser)}, false),
	)
}

func BenchmarkProviderView(b *testing.B) {
	events := benchLog()
	b.ReportMetric(float64(len(events)), "events/op")
	b.ReportAllocs()
	for b.Loop() {
		_ = ProviderView(events)
	}
}

func BenchmarkUserView(b *testing.B) {
	events := benchLog()
	b.ReportAllocs()
	for b.Loop() {
		_ = UserView(events)
	}
}

func TestAudienceOfChatResponses(t *testing.T) {
	t.Parallel()
	aside := NewChatMessage("I think the answer is 4.")
	aside.ChatResponse.Audience = []Role{RoleAssistant}
	delivered := NewChatMessage("I think the answer is 4.")
	delivered.ChatResponse.Audience = []Role{RoleUser}
	relayed := NewValidationCorrection("data_relay", 1, "relay the data")
	relayed.ValidationCorrection.CallID = "c1"
	events := []Event{
		NewInboxMessage("1-0", KindUser, "user:a", "2+2?"),
		aside,
		delivered,
		NewToolCallRequest("c1", "respond", json.RawMessage(`{"message":"4"}`)),
		NewToolCallResponse("c1", "respond", []Block{TextBlock("relay the data")}, true),
		relayed,
	}
	pv := ProviderView(events)
	if len(pv) != 3 {
		t.Fatalf("ProviderView gave %d messages, want user, one assistant message and the tool result: %+v", len(pv), pv)
	}
	if got := pv[1]; got.Text() != "I think the answer is 4." || len(got.ToolCalls) != 1 {
		t.Errorf("assistant message = %+v; want the aside and the call, not the delivered copy", got)
	}
	uv := UserView(events)
	var texts []string
	for _, e := range uv {
		if e.ChatResponse != nil {
			texts = append(texts, e.ChatResponse.Text)
		}
	}
	if len(texts) != 1 || uv[1].ChatResponse != delivered.ChatResponse {
		t.Errorf("user view chat responses = %q; want only the delivered one", texts)
	}
}

func TestResultText(t *testing.T) {
	t.Parallel()
	img := ImageBlock("image/png", "iVBORw0KGgo=")
	for _, tc := range []struct {
		m    Message
		want string
	}{
		{Message{Role: MessageTool, Content: []Block{TextBlock("42")}}, "42"},
		{Message{Role: MessageTool, Content: []Block{img}}, PlaceholderSuccess},
		{Message{Role: MessageTool, Content: []Block{img}, IsError: true}, PlaceholderFailure},
	} {
		if got := tc.m.ResultText(); got != tc.want {
			t.Errorf("ResultText(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

// TestProviderViewAppend checks that the view of a history, continued with
// the rest of a log, is the view of the whole log wherever the rest starts
// with an event that ends a model response or the history's view does not
// end with one, and that any other split is refused, as is one after calls
// still without results (what comes next may be held back).
func TestProviderViewAppend(t *testing.T) {
	t.Parallel()
	log := []Event{
		NewTurnStart("wake"),
		NewInboxMessage("m1", KindUser, "user:alice", "Count the files."),
		NewReasoning("Count first.", "sig", nil),
		NewChatMessage("Counting."),
		{Type: TypeHostedActivity, HostedActivity: &HostedActivity{ActivityID: "ws1", Name: "web_search", State: ActivityStarted}},
		NewToolCallRequest("c1", "count_files", json.RawMessage(`{"dir":"."}`)),
		NewModelUsage(ModelUsage{InputTokens: 5, OutputTokens: 2}),
		NewToolCallResponse("c1", "count_files", []Block{TextBlock("412")}, false),
		NewChatMessage(""), // an empty response: dropped where it ends
		NewStateChange("RUNNING", "BLOCKED", "await_user"),
		NewTurnStart("wake"),
		NewInboxMessage("m2", KindOperator, "operator:bob", "Hurry."),
		NewChatMessage("412."),
		NewValidationCorrection("no_tool_call", 1, "End your turn with respond."),
		NewToolCallRequest("c2", "respond", json.RawMessage(`{"message":"412."}`)),
		tellUser("c2", "412."),
	}
	whole := ProviderView(log)
	for i := range len(log) + 1 {
		history, rest := log[:i], log[i:]
		view := ProviderView(history)
		got, ok := ProviderViewAppend(view[:len(view):len(view)], rest)
		endsResponse := i == len(log) || !(rest[0].fromModel() || unseen(&rest[0]))
		afterResponse := len(view) > 0 && view[len(view)-1].Role == MessageAssistant
		if want := (endsResponse || !afterResponse) && !waiting(view); ok != want {
			t.Errorf("split before event %d (%s): ok = %v, want %v", i, eventType(rest), ok, want)
		}
		if !ok {
			continue
		}
		if diff := cmp.Diff(whole, got); diff != "" {
			t.Errorf("split before event %d (%s): view (-whole log +appended):\n%s", i, eventType(rest), diff)
		}
	}
}

func eventType(events []Event) EventType {
	if len(events) == 0 {
		return "end"
	}
	return events[0].Type
}

// during marks inbox message e as drained while its turn ran.
func during(e Event) Event {
	e.InboxMessage.DuringTurn = true
	return e
}
