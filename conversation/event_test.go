package conversation

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// equalJSON compares raw JSON ignoring insignificant whitespace:
// MarshalIndent indents raw values too.
var equalJSON = cmp.Comparer(func(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
})

var at = time.Date(2026, 3, 14, 9, 26, 53, 123456789, time.UTC)

// stamp sets the common fields the log appender and storage set.
func stamp(e Event, id, by string) Event {
	e.ID, e.At, e.Turn, e.By = id, at, "t-1", by
	return e
}

// samples has one event of every type, with every field set that the type
// has, so that the golden files pin the whole JSON shape.
func samples() []Event {
	payload := &ProviderPayload{Provider: "anthropic", Format: "thinking", Version: "1", Value: json.RawMessage(`{"redacted":"abc"}`)}
	return []Event{
		stamp(NewTurnStart("wake"), "1-0", "node:n1"),
		stamp(NewInboxMessage("1718000000000-0", KindProcessEvent, "proc-42", "Worker finished: 3 files."), "1-1", "node:n1"),
		stamp(Event{Type: TypeChatResponse, ChatResponse: &ChatResponse{
			Variant:    VariantMessage,
			Text:       "Brain runs agents [1].",
			Structured: json.RawMessage(`{"answer":42}`),
			Signature:  "sig-1",
			Payload:    payload,
			Citations: []Citation{{
				Source:     Source{URL: "https://example.com/a", Title: "A"},
				Excerpt:    "runs agents",
				Range:      &Range{Start: 0, End: 17},
				Replay:     &ProviderPayload{Provider: "openai", Format: "url_citation", Value: json.RawMessage(`{"i":1}`)},
				Incomplete: true,
			}},
		}}, "1-2", "model"),
		stamp(Event{Type: TypeToolCallRequest, ToolCallRequest: &ToolCallRequest{
			CallID: "call_1", Name: "tell_user",
			Arguments: json.RawMessage(`{"message":"Phase 1 done."}`),
			Payload:   &ProviderPayload{Provider: "gemini", Format: "thought_signature", Value: json.RawMessage(`"c2ln"`)},
		}}, "1-3", "model"),
		stamp(withCitations(NewToolCallResponse("call_1", "read_file", []Block{
			MarkdownBlock("Phase 1 done.").For(RoleUser),
			TextBlock("Message shown to user.").For(RoleAssistant),
			ImageBlock("image/png", "iVBORw0KGgo="),
			ResourceBlock(Resource{URI: "file:///r.txt", MimeType: "text/plain", Text: "hello"}),
			ResourceBlock(Resource{URI: "file:///r.bin", Blob: "AAEC"}),
			{Type: BlockText, Text: "", Annotations: &Annotations{Audience: []Role{RoleUser, RoleAssistant}, Priority: new(0.5), LastModified: "2026-03-14T09:26:53Z"}},
		}, true), Citation{Source: Source{URL: "https://example.com/b", Title: "B"}, Excerpt: "runs"}), "1-4", "node:n1"),
		stamp(NewValidationCorrection("no_tool_call", 1, "End your turn with respond."), "1-5", "node:n1"),
		stamp(NewStateChange("RUNNING", "BLOCKED", "await_user"), "1-6", "model"),
		stamp(NewSystemNotice("max_rounds", "The turn reached 20 rounds."), "1-7", "system"),
		stamp(Event{Type: TypeHostedActivity, HostedActivity: &HostedActivity{
			ActivityID: "ws_1", Name: "web_search", State: ActivityCompleted,
			Input: json.RawMessage(`{"query":"brain"}`), Summary: "3 results", Payload: payload, TextAt: 12,
		}}, "1-8", "model"),
		stamp(Event{Type: TypePresentation, Presentation: &Presentation{
			CallID: "call_2", Summary: "Two sources.",
			Blocks:   json.RawMessage(`[{"kind":"metrics","items":[{"label":"files","value":"3"}]}]`),
			Markdown: "| a | b |\n|---|---|\n| 1 | 2 |",
		}}, "1-9", "node:n1"),
		stamp(NewModelUsage(ModelUsage{Provider: "openai", Model: "gpt-5", InputTokens: 1200, OutputTokens: 85}), "1-10", "model"),
		stamp(NewApprovalRequested([]PendingCall{{
			CallID: "call_3", Name: "http_fetch", Arguments: json.RawMessage(`{"url":"https://example.com"}`),
			By: ApproverOperator, Key: "t-1/2", Deadline: new(time.Date(2026, 3, 14, 10, 26, 53, 0, time.UTC)),
		}}), "1-11", "engine"),
		stamp(NewApprovalDecided(ApprovalDecision{CallID: "call_3", Decision: Reject, Reason: "Not that site."}), "1-12", "operator:bob"),
		stamp(NewPhaseChange("draft", "critique", PhaseDone, json.RawMessage(`{"draft":"Brain runs agents."}`)), "1-13", "engine"),
	}
}

func withCitations(e Event, cs ...Citation) Event {
	e.ToolCallResponse.Citations = cs
	return e
}

func TestEventGolden(t *testing.T) {
	t.Parallel()
	seen := map[EventType]bool{}
	for _, e := range samples() {
		seen[e.Type] = true
		t.Run(string(e.Type), func(t *testing.T) {
			t.Parallel()
			if err := e.Validate(); err != nil {
				t.Fatalf("sample does not validate: %v", err)
			}
			got, err := json.MarshalIndent(e, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", string(e.Type)+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./conversation -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s changed (-stored +now); if intended, run go test ./conversation -update:\n%s", path, diff)
			}
			var back Event
			if err := json.Unmarshal(want, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(e, back, equalJSON); diff != "" {
				t.Errorf("decoding %s (-want +got):\n%s", path, diff)
			}
		})
	}
	for typ := range (&Event{}).payloads() {
		if !seen[typ] {
			t.Errorf("no sample of type %q", typ)
		}
	}
}

func TestEventRoundTrip(t *testing.T) {
	t.Parallel()
	tests := map[string]Event{
		"bare turn start":       NewTurnStart(""),
		"user message":          stamp(NewInboxMessage("5-0", KindUser, "user:alice", "héllo 👋\n<b>&</b>"), "", "user:alice"),
		"chat message":          NewChatMessage("hi", Citation{Source: Source{URL: "https://x.test"}}),
		"structured":            NewStructured(json.RawMessage(`{"a":[1,2]}`)),
		"reasoning":             NewReasoning("thinking", "sig", &ProviderPayload{Provider: "openai", Format: "encrypted", Value: json.RawMessage(`"b64"`)}),
		"tool call no args":     NewToolCallRequest("c1", "clock", nil),
		"tool response no body": NewToolCallResponse("c1", "clock", nil, false),
		"empty text block":      NewToolCallResponse("c1", "echo", []Block{TextBlock("")}, false),
		"unknown block type":    NewToolCallResponse("c1", "mcp", []Block{{Type: "audio", Data: "AAA=", MimeType: "audio/wav"}}, false),
		"state change from nil": NewStateChange("", "READY", "create"),
		"all stamps":            stamp(NewSystemNotice("x", "y"), "9-9", "operator:bob"),
	}
	for name, e := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			var back Event
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(e, back); diff != "" {
				t.Errorf("decode(encode(e)) differs (-want +got):\n%s\njson: %s", diff, data)
			}
		})
	}
}

func TestBlockJSONIsMCP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		block Block
		want  string
	}{
		{"tell_user message", MarkdownBlock("Phase 1 done.").For(RoleUser),
			`{"type":"text","text":"Phase 1 done.","mimeType":"text/markdown","annotations":{"audience":["user"]}}`},
		{"tell_user ack", TextBlock("Message shown to user.").For(RoleAssistant),
			`{"type":"text","text":"Message shown to user.","annotations":{"audience":["assistant"]}}`},
		{"empty text keeps text", TextBlock(""), `{"type":"text","text":""}`},
		{"image", ImageBlock("image/png", "iVBO"), `{"type":"image","mimeType":"image/png","data":"iVBO"}`},
		{"text resource", ResourceBlock(Resource{URI: "file:///a", MimeType: "text/plain", Text: "x"}),
			`{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"x"}}`},
		{"blob resource", ResourceBlock(Resource{URI: "file:///b", Blob: "AA=="}),
			`{"type":"resource","resource":{"uri":"file:///b","blob":"AA=="}}`},
		{"for nobody is for everyone", TextBlock("x").For(RoleUser).For(), `{"type":"text","text":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tt.block)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			var back Block
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.block, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownEventTypeDecodes(t *testing.T) {
	t.Parallel()
	data := `{"id":"7-0","type":"hologram","at":"2026-03-14T09:26:53Z","turn":"t-9","by":"model",` +
		`"hologram":{"frames":3},"future_field":true}`
	var e Event
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		t.Fatalf("an unknown event type must decode: %v", err)
	}
	want := Event{ID: "7-0", Type: "hologram", At: time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC), Turn: "t-9", By: "model"}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	err := e.Validate()
	if !errors.Is(err, ErrUnknownType) || errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate() = %v, want ErrUnknownType only", err)
	}
	if want := `conversation: unknown event type: event 7-0: type "hologram" is not known to this version`; err.Error() != want {
		t.Errorf("Validate() = %q, want %q", err, want)
	}
	if v := ProviderView([]Event{e}); len(v) != 0 {
		t.Errorf("ProviderView sent an unknown event: %+v", v)
	}
	if v := UserView([]Event{e}); len(v) != 0 {
		t.Errorf("UserView passed an unknown event: %+v", v)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	twoPayloads := NewTurnStart("")
	twoPayloads.SystemNotice = &SystemNotice{Code: "x"}
	wrongPayload := NewTurnStart("")
	wrongPayload.Type = TypeSystemNotice
	noPayload := Event{ID: "3-0", Type: TypeToolCallResponse}
	badAudience := NewToolCallResponse("c1", "t", []Block{TextBlock("a"), TextBlock("b").For("users")}, false)
	badAudience.ID = "4-0"
	tests := []struct {
		name  string
		event Event
		want  string // error text; empty for valid
	}{
		{"constructor turn start", NewTurnStart(""), ""},
		{"constructor tool response", NewToolCallResponse("c1", "t", nil, true), ""},
		{"missing type", Event{}, "conversation: invalid event: event (no id): type is missing"},
		{"missing payload", noPayload, `conversation: invalid event: event 3-0: payload "tool_call_response" is missing`},
		{"two payloads", twoPayloads, `conversation: invalid event: event (no id): has payloads ["turn_start" "system_notice"]; only "turn_start" is allowed`},
		{"mismatched payload", wrongPayload, `conversation: invalid event: event (no id): has payloads ["turn_start"]; only "system_notice" is allowed`},
		{"inbox without id", NewInboxMessage("", KindUser, "", "hi"), "conversation: invalid event: event (no id): inbox_message.message_id: must not be empty"},
		{"inbox bad kind", NewInboxMessage("1-0", "robot", "", "hi"), `conversation: invalid event: event (no id): inbox_message.kind: "robot" is not one of user, operator, process_event, schedule, system`},
		{"chat bad variant", Event{Type: TypeChatResponse, ChatResponse: &ChatResponse{Variant: "song"}}, `conversation: invalid event: event (no id): chat_response.variant: "song" is not one of message, structured, reasoning`},
		{"structured empty", NewStructured(nil), "conversation: invalid event: event (no id): chat_response.structured: must not be empty"},
		{"structured invalid", NewStructured(json.RawMessage(`{`)), "conversation: invalid event: event (no id): chat_response.structured: is not valid JSON"},
		{"reasoning payload no provider", NewReasoning("", "", &ProviderPayload{Format: "x"}), "conversation: invalid event: event (no id): chat_response.payload.provider: must not be empty"},
		{"tool call no name", NewToolCallRequest("c1", "", nil), "conversation: invalid event: event (no id): tool_call_request.name: must not be empty"},
		{"tool call bad args", Event{Type: TypeToolCallRequest, ToolCallRequest: &ToolCallRequest{CallID: "c1", Name: "x", Arguments: json.RawMessage(`{"a":`)}}, "conversation: invalid event: event (no id): tool_call_request.arguments: is not valid JSON"},
		{"tool response no call id", NewToolCallResponse("", "x", nil, false), "conversation: invalid event: event (no id): tool_call_response.call_id: must not be empty"},
		{"tool response block no type", NewToolCallResponse("c1", "x", []Block{{Text: "a"}}, false), "conversation: invalid event: event (no id): tool_call_response.content[0].type: must not be empty"},
		{"tool response bad audience", badAudience, `conversation: invalid event: event 4-0: tool_call_response.content[1].annotations.audience[0]: "users" is not one of user, assistant`},
		{"correction attempt 0", NewValidationCorrection("data_relay", 0, "x"), "conversation: invalid event: event (no id): validation_correction.attempt: must be at least 1 (got 0)"},
		{"state change no to", NewStateChange("READY", "", "wake"), "conversation: invalid event: event (no id): state_change.to: must not be empty"},
		{"notice no code", NewSystemNotice("", "x"), "conversation: invalid event: event (no id): system_notice.code: must not be empty"},
		{"usage negative", NewModelUsage(ModelUsage{InputTokens: -1}), "conversation: invalid event: event (no id): model_usage.input_tokens: counts must not be negative (got -1 in, 0 out)"},
		{"hosted bad state", Event{Type: TypeHostedActivity, HostedActivity: &HostedActivity{ActivityID: "a", Name: "n", State: "paused"}}, `conversation: invalid event: event (no id): hosted_activity.state: "paused" is not one of started, completed, failed`},
		{"presentation no summary", Event{Type: TypePresentation, Presentation: &Presentation{CallID: "c"}}, "conversation: invalid event: event (no id): presentation.summary: must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.event.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want == "":
				return
			case err == nil:
				t.Fatalf("Validate() = nil, want %q", tt.want)
			case !errors.Is(err, ErrInvalid):
				t.Errorf("Validate() = %v, does not wrap ErrInvalid", err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTextOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		blocks []Block
		want   string
	}{
		{"none", nil, ""},
		{"one", []Block{TextBlock("a")}, "a"},
		{"joined by newlines, empty skipped", []Block{TextBlock("a"), TextBlock(""), MarkdownBlock("**b**")}, "a\n**b**"},
		{"text resource counts, image and blob do not", []Block{
			ImageBlock("image/png", "AAAA"),
			ResourceBlock(Resource{URI: "file:///a", Text: "r"}),
			ResourceBlock(Resource{URI: "file:///b", Blob: "AAAA"}),
			{Type: BlockResource},
		}, "r"},
		{"audience ignored", []Block{TextBlock("u").For(RoleUser), TextBlock("a").For(RoleAssistant)}, "u\na"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := TextOf(tt.blocks); got != tt.want {
				t.Errorf("TextOf() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBlockAudience(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		block           Block
		user, assistant bool
	}{
		{"unannotated", TextBlock("x"), true, true},
		{"empty audience", Block{Type: BlockText, Annotations: &Annotations{Audience: []Role{}}}, true, true},
		{"priority only", Block{Type: BlockText, Annotations: &Annotations{Priority: new(1.0)}}, true, true},
		{"user", TextBlock("x").For(RoleUser), true, false},
		{"assistant", TextBlock("x").For(RoleAssistant), false, true},
		{"both", TextBlock("x").For(RoleAssistant, RoleUser), true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.block.ForUser(); got != tt.user {
				t.Errorf("ForUser() = %v, want %v", got, tt.user)
			}
			if got := tt.block.ForAssistant(); got != tt.assistant {
				t.Errorf("ForAssistant() = %v, want %v", got, tt.assistant)
			}
		})
	}
}

func TestForDoesNotShareAnnotations(t *testing.T) {
	t.Parallel()
	roles := []Role{RoleUser}
	orig := Block{Type: BlockText, Text: "x", Annotations: &Annotations{Priority: new(0.2)}}
	b := orig.For(roles...)
	roles[0] = RoleAssistant
	if orig.Annotations.Audience != nil {
		t.Errorf("For modified the original block's annotations: %+v", orig.Annotations)
	}
	if !b.ForUser() || b.ForAssistant() {
		t.Errorf("For kept the caller's slice: audience %v", b.Annotations.Audience)
	}
	if b.Annotations.Priority == nil || *b.Annotations.Priority != 0.2 {
		t.Errorf("For dropped the priority: %+v", b.Annotations)
	}
}

func TestAddressedToDoesNotWriteIntoInput(t *testing.T) {
	t.Parallel()
	in := []Block{TextBlock("a"), TextBlock("b")}
	out := AddressedTo(in[:1], RoleUser)
	_ = append(out, TextBlock("c"))
	if in[1].Text != "b" {
		t.Errorf("appending to AddressedTo's result overwrote the input: %q", in[1].Text)
	}
	if strings.Contains(TextOf(AddressedTo([]Block{TextBlock("u").For(RoleUser)}, RoleAssistant)), "u") {
		t.Error("a user block was addressed to the assistant")
	}
}

func TestToolCallRequestKeepsBrokenArguments(t *testing.T) {
	t.Parallel()
	e := NewToolCallRequest("c1", "lookup", json.RawMessage(`{"query": "x"`))
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatalf("an event with broken arguments does not encode: %v", err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var raw string
	if err := json.Unmarshal(back.ToolCallRequest.Arguments, &raw); err != nil || raw != `{"query": "x"` {
		t.Errorf("arguments = %s; want the raw text kept as a JSON string", back.ToolCallRequest.Arguments)
	}
}

// TestProcessEvent checks that a worker's report is read from a
// process_event message, and only from one that holds a report.
func TestProcessEvent(t *testing.T) {
	t.Parallel()
	report := `{"child":"p_w","recipe":"w","status":"done","result":"ok","sources":[{"url":"https://a.test","title":"A"}]}`
	got, ok := (&InboxMessage{Kind: KindProcessEvent, Content: report}).ProcessEvent()
	want := ProcessEvent{Child: "p_w", Recipe: "w", Status: "done", Result: "ok", Sources: []Source{{URL: "https://a.test", Title: "A"}}}
	if !ok || !cmp.Equal(got, want) {
		t.Errorf("ProcessEvent() = %+v, %v; want %+v", got, ok, want)
	}
	for _, m := range []InboxMessage{
		{Kind: KindUser, Content: report},
		{Kind: KindProcessEvent, Content: "the worker is done"},
		{Kind: KindProcessEvent, Content: `{"result":"no child"}`},
	} {
		if got, ok := m.ProcessEvent(); ok {
			t.Errorf("%+v read as a report: %+v", m, got)
		}
	}
}

// TestProcessEventData: a report carries a structured result as data, as
// JSON the parent's model reads in the report; a report of an older
// version, without data, still reads.
func TestProcessEventData(t *testing.T) {
	t.Parallel()
	report := ProcessEvent{Child: "p_w", Recipe: "w", Status: "done", Result: `{"count": 3}`, Data: json.RawMessage(`{"count":3}`)}
	body, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	m := InboxMessage{Kind: KindProcessEvent, From: "process:p_w", Content: string(body)}
	got, ok := m.ProcessEvent()
	if !ok || !cmp.Equal(got, report) {
		t.Errorf("ProcessEvent() = %+v, %v; want %+v", got, ok, report)
	}
	view := ProviderView([]Event{{Type: TypeInboxMessage, InboxMessage: &m}})
	if len(view) != 1 || !strings.Contains(TextOf(view[0].Content), `"data":{"count":3}`) {
		t.Errorf("provider view = %+v, want the report with its data", view)
	}
	old, ok := (&InboxMessage{Kind: KindProcessEvent, Content: `{"child":"p_w","recipe":"w","status":"done","result":"ok"}`}).ProcessEvent()
	if !ok || old.Data != nil || old.Result != "ok" {
		t.Errorf("an older report = %+v, %v; want it read without data", old, ok)
	}
}
