package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

// logged is the log of a conversation whose one answer is r, as the engine
// writes it, and the user's next message.
func logged(r llm.Response) []conversation.Event {
	events := []conversation.Event{conversation.NewInboxMessage("m0", conversation.KindUser, "", "What is the weather in Paris?")}
	for _, h := range r.Hosted {
		events = append(events, conversation.NewHostedActivity(h))
	}
	for _, rs := range r.Reasoning {
		events = append(events, conversation.NewReasoning(rs.Text, rs.Signature, rs.Payload))
	}
	events = append(events, conversation.NewChatMessage(r.Text, r.Citations...))
	return append(events, conversation.NewInboxMessage("m1", conversation.KindUser, "", "And tomorrow?"))
}

// elsewhere is events with every payload said to be another provider's:
// a conversation switched to this provider from that one.
func elsewhere(events []conversation.Event) []conversation.Event {
	out := make([]conversation.Event, len(events))
	for i, e := range events {
		if h := e.HostedActivity; h != nil && h.Payload != nil {
			c, p := *h, *h.Payload
			p.Provider = "openai"
			c.Payload = &p
			e.HostedActivity = &c
		}
		if m := e.ChatResponse; m != nil {
			c := *m
			c.Citations = nil
			for _, ct := range m.Citations {
				p := *ct.Replay
				p.Provider = "openai"
				ct.Replay = &p
				c.Citations = append(c.Citations, ct)
			}
			e.ChatResponse = &c
		}
		out[i] = e
	}
	return out
}

// TestReplaySearch checks what a request after a web search sends of the
// answer: for Anthropic's own payloads, the blocks it streamed, in its
// order (text, the search's server_tool_use and result blocks, the cited
// text block with its citations, the last text); for another provider's,
// the text alone.
func TestReplaySearch(t *testing.T) {
	t.Parallel()
	const file = "web_search.sse"
	blocks := recorded(t, file, "content_block_start", "content_block")
	cites := recorded(t, file, "content_block_delta", "delta", "citation")
	tests := []struct {
		name string
		log  func([]conversation.Event) []conversation.Event
		want []string
	}{
		{
			name: "its own answer goes back as it came",
			log:  func(e []conversation.Event) []conversation.Event { return e },
			want: []string{
				`{"type":"text","text":"Let me look that up."}`,
				useBlock("srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", "Paris weather today"),
				blocks[2],
				`{"type":"text","text":"According to the forecast, "}`,
				`{"type":"text","text":"Paris is sunny at 18°C today","citations":[` + cites[0] + `,` + cites[1] + `]}`,
				`{"type":"text","text":"."}`,
			},
		},
		{
			name: "another provider's answer goes back as its text",
			log:  elsewhere,
			want: []string{`{"type":"text","text":"Let me look that up.According to the forecast, Paris is sunny at 18°C today."}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{}, llmtest.Streamed(t, file), llmtest.Streamed(t, "text.sse"))
			req := &llm.Request{Messages: llmtest.UserRequest("What is the weather in Paris?").Messages, Params: llm.Params{HostedTools: []string{"web_search"}}}
			first, err := llm.Collect(b.client.Generate(context.Background(), req))
			if err != nil {
				t.Fatal(err)
			}
			req.Messages = conversation.ProviderView(tt.log(logged(first)))
			if _, err := llmtest.Drain(t, context.Background(), b.client, req); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(jsonList(t, tt.want), assistantSent(t, b.fake.Requests()[1].Body)); diff != "" {
				t.Errorf("assistant blocks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReplayHalfSearch checks that a search goes back whole or not at all:
// a started search without its result (cut before it ended), and a result
// whose start has no payload (logged before started states had one), are
// left out; the citation and the text stay.
func TestReplayHalfSearch(t *testing.T) {
	t.Parallel()
	const cite = `{"type":"web_search_result_location","cited_text":"c","url":"https://example.com/c","title":"C","encrypted_index":"Eo8C"}`
	m := conversation.Message{
		Role:    conversation.MessageAssistant,
		Content: []conversation.Block{conversation.TextBlock("Before. Cited.")},
		Hosted: []conversation.HostedActivity{
			{ActivityID: "srvtoolu_a", Name: "web_search", State: conversation.ActivityStarted, TextAt: 8, Payload: usePayload(useBlock("srvtoolu_a", "a"))},
			{ActivityID: "srvtoolu_b", Name: "web_search", State: conversation.ActivityStarted, TextAt: 8},
			{ActivityID: "srvtoolu_b", Name: "web_search", State: conversation.ActivityCompleted, TextAt: 8, Payload: searchPayload(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_b","content":[]}`)},
		},
		Citations: []conversation.Citation{{Source: conversation.Source{URL: "https://example.com/c"}, Range: &conversation.Range{Start: 8, End: 14}, Replay: citationPayload(cite)}},
	}
	body, _ := sent(t, Config{}, &llm.Request{Messages: []conversation.Message{text(conversation.MessageUser, "hi"), m, text(conversation.MessageUser, "more")}})
	raw, _ := json.Marshal(body["messages"].([]any)[1].(map[string]any)["content"])
	want := jsonList(t, []string{`{"type":"text","text":"Before. "}`, `{"type":"text","text":"Cited.","citations":[` + cite + `]}`})
	if diff := cmp.Diff(want, jsonArray(t, raw)); diff != "" {
		t.Errorf("assistant blocks (-want +got):\n%s", diff)
	}
}

// TestReplayRefused checks that a payload of this adapter it cannot send
// back refuses the request before anything is sent, with an error naming
// the place, the format and why: a value that does not decode, or a
// version it cannot continue (naming those it knows).
func TestReplayRefused(t *testing.T) {
	t.Parallel()
	payload := func(format, version, value string) *conversation.ProviderPayload {
		return &conversation.ProviderPayload{Provider: "anthropic", Format: format, Version: version, Value: json.RawMessage(value)}
	}
	search := func(p *conversation.ProviderPayload) func(*conversation.Message) {
		return func(m *conversation.Message) {
			m.Hosted = []conversation.HostedActivity{
				{ActivityID: "srvtoolu_a", Name: "web_search", State: conversation.ActivityStarted, Payload: usePayload(useBlock("srvtoolu_a", "a"))},
				{ActivityID: "srvtoolu_a", Name: "web_search", State: conversation.ActivityCompleted, Payload: p},
			}
		}
	}
	started := func(p *conversation.ProviderPayload) func(*conversation.Message) {
		return func(m *conversation.Message) {
			m.Hosted = []conversation.HostedActivity{{ActivityID: "srvtoolu_a", Name: "web_search", State: conversation.ActivityStarted, Payload: p}}
		}
	}
	cited := func(p *conversation.ProviderPayload) func(*conversation.Message) {
		return func(m *conversation.Message) {
			m.Citations = []conversation.Citation{{Source: conversation.Source{URL: "https://example.com"}, Range: &conversation.Range{Start: 0, End: 3}, Replay: p}}
		}
	}
	reasoned := func(p *conversation.ProviderPayload) func(*conversation.Message) {
		return func(m *conversation.Message) { m.Reasoning = []conversation.Reasoning{{Payload: p}} }
	}
	tests := []struct {
		name   string
		edit   func(*conversation.Message)
		errHas string
	}{
		{
			name: "a server_tool_use payload that is not a block", edit: started(payload("server_tool_use", "web_search_20250305", `12345`)),
			errHas: "messages[1].hosted[0]: the server_tool_use payload does not decode: json: cannot unmarshal number",
		},
		{
			name: "a web_search_tool_result payload of another block", edit: search(payload("web_search_tool_result", "web_search_20250305", `{"type":"text"}`)),
			errHas: `messages[1].hosted[1]: the web_search_tool_result payload does not decode: its value's type is "text", not "web_search_tool_result"`,
		},
		{
			name: "a citation payload that is not a citation", edit: cited(payload("citation", "web_search_20250305", `"x"`)),
			errHas: "messages[1].citations[0]: the citation payload does not decode: json: cannot unmarshal string",
		},
		{
			name: "a redacted_thinking payload that is not a string", edit: reasoned(payload("redacted_thinking", "2026-10-21", `{"data":"x"}`)),
			errHas: "messages[1].reasoning[0]: the redacted_thinking payload does not decode: its value is not a non-empty JSON string",
		},
		{
			name: "a server_tool_use payload of an unknown version", edit: started(payload("server_tool_use", "web_search_20991231", useBlock("srvtoolu_a", "a"))),
			errHas: `messages[1].hosted[0]: the server_tool_use payload is of version "web_search_20991231", which this adapter cannot continue (it knows "web_search_20250305")`,
		},
		{
			name: "a web_search_tool_result payload of no version", edit: search(payload("web_search_tool_result", "", `{"type":"web_search_tool_result"}`)),
			errHas: `messages[1].hosted[1]: the web_search_tool_result payload is of version "", which this adapter cannot continue (it knows "web_search_20250305")`,
		},
		{
			name: "a citation payload of an unknown version", edit: cited(payload("citation", "web_search_20991231", `{"type":"web_search_result_location"}`)),
			errHas: `messages[1].citations[0]: the citation payload is of version "web_search_20991231", which this adapter cannot continue (it knows "web_search_20250305", none (logged before versions))`,
		},
		{
			name: "a redacted_thinking payload of an unknown version", edit: reasoned(payload("redacted_thinking", "2023-06-01", `"EmwK"`)),
			errHas: `messages[1].reasoning[0]: the redacted_thinking payload is of version "2023-06-01", which this adapter cannot continue (it knows "2026-10-21", none (logged before versions))`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := text(conversation.MessageAssistant, "Found it.")
			tt.edit(&m)
			b := setup(t, Config{})
			_, err := llmtest.Drain(t, context.Background(), b.client, &llm.Request{Messages: []conversation.Message{text(conversation.MessageUser, "hi"), m, text(conversation.MessageUser, "more")}})
			if !errors.Is(err, ErrBadRequest) || !errors.Is(err, ErrPayload) || errors.Is(err, ErrUnavailable) ||
				!strings.Contains(err.Error(), tt.errHas) || !strings.HasPrefix(err.Error(), "anthropic: ") {
				t.Fatalf("error %v, want an anthropic ErrBadRequest and ErrPayload with %q", err, tt.errHas)
			}
			if n := len(b.fake.Requests()); n != 0 {
				t.Errorf("%d requests, want none", n)
			}
		})
	}
}

// assistantSent is the content of the assistant message of a request body
// whose messages are user, assistant, user, each block decoded.
func assistantSent(t *testing.T, body []byte) []any {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 3 || req.Messages[1].Role != "assistant" {
		t.Fatalf("messages are not user, assistant, user: %s", body)
	}
	return jsonArray(t, req.Messages[1].Content)
}

// jsonList decodes each JSON document of docs.
func jsonList(t *testing.T, docs []string) []any {
	t.Helper()
	out := make([]any, len(docs))
	for i, d := range docs {
		out[i] = decode(t, d)
	}
	return out
}

// jsonArray decodes a JSON array.
func jsonArray(t *testing.T, raw []byte) []any {
	t.Helper()
	var out []any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
