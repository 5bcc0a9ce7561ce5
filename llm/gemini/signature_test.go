package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

// searchRequest is a request of view with the hosted web search on, as
// every request of these tests is.
func searchRequest(view []conversation.Message) *llm.Request {
	return &llm.Request{Messages: view, Params: llm.Params{HostedTools: []string{"web_search"}}}
}

// answered is the view of a conversation: a question, the answer resp (each
// of its payloads changed by edit, when set), a result for each of its
// calls, and the user's next message.
func answered(resp llm.Response, edit func(*conversation.ProviderPayload)) []conversation.Message {
	m := conversation.Message{
		Role: conversation.MessageAssistant, Content: []conversation.Block{conversation.TextBlock(resp.Text)},
		Reasoning: slices.Clone(resp.Reasoning), ToolCalls: slices.Clone(resp.ToolCalls),
		Hosted: resp.Hosted, Citations: resp.Citations,
	}
	change := func(p **conversation.ProviderPayload) {
		if *p != nil && edit != nil {
			c := **p
			edit(&c)
			*p = &c
		}
	}
	for i := range m.Reasoning {
		change(&m.Reasoning[i].Payload)
	}
	for i := range m.ToolCalls {
		change(&m.ToolCalls[i].Payload)
	}
	view := []conversation.Message{text(conversation.MessageUser, "Question?"), m}
	for _, c := range resp.ToolCalls {
		view = append(view, conversation.Message{Role: conversation.MessageTool, ToolCallID: c.ID, ToolName: c.Name, Content: []conversation.Block{conversation.TextBlock("ok")}})
	}
	return append(view, text(conversation.MessageUser, "Go on."))
}

// firstAnswer asks b's client the question and returns its answer, the
// fake's first reply.
func firstAnswer(t *testing.T, b bundle) llm.Response {
	t.Helper()
	q := []conversation.Message{text(conversation.MessageUser, "Question?")}
	resp, err := llm.Collect(b.client.Generate(context.Background(), searchRequest(q)))
	if err != nil {
		t.Fatalf("first answer: %v", err)
	}
	return resp
}

// TestReplay checks what a second request sends back of a recorded
// answer: Gemini's thought signatures on the parts they came with, as
// received (also when logged without a version, before versions were
// recorded); another provider's payloads and reasoning not at all; a
// search as its text alone.
func TestReplay(t *testing.T) {
	t.Parallel()
	call := `{"functionCall": {"id": "call_aUJmaZ2qBMfUjMcP1b2Y2Qk_0", "name": "get_weather", "args": {"days": 3, "location": "Paris, France", "unit": "celsius"}}`
	callResult := `{"role": "user", "parts": [
		{"functionResponse": {"id": "call_aUJmaZ2qBMfUjMcP1b2Y2Qk_0", "name": "get_weather", "response": {"output": "ok"}}},
		{"text": "Go on."}
	]}`
	question, next := `{"role": "user", "parts": [{"text": "Question?"}]}`, `{"role": "user", "parts": [{"text": "Go on."}]}`
	tests := []struct {
		name      string
		recording string
		edit      func(*conversation.ProviderPayload)
		want      string // the contents of the second request
	}{
		{
			name: "a thought goes back with its signature", recording: "thinking.sse",
			want: `[` + question + `, {"role": "model", "parts": [
				{"text": "**Adding two numbers**\n\nThe user asks for 2+2. That is 4.", "thought": true, "thoughtSignature": "` + sigThought + `"},
				{"text": "2 + 2 = 4."}
			]}, ` + next + `]`,
		},
		{
			name: "a function call goes back with its signature", recording: "function_call.sse",
			want: `[` + question + `, {"role": "model", "parts": [
				{"text": "I'll check the weather in Paris for you."},
				` + call + `, "thoughtSignature": "` + sigCall + `"}
			]}, ` + callResult + `]`,
		},
		{
			name: "signatures logged without a version go back as received", recording: "function_call.sse",
			edit: func(p *conversation.ProviderPayload) { p.Version = "" },
			want: `[` + question + `, {"role": "model", "parts": [
				{"text": "I'll check the weather in Paris for you."},
				` + call + `, "thoughtSignature": "` + sigCall + `"}
			]}, ` + callResult + `]`,
		},
		{
			name: "a search goes back as its text: no request field takes grounding", recording: "web_search.sse",
			want: `[` + question + `, {"role": "model", "parts": [{"text": "` + searchText + `"}]}, ` + next + `]`,
		},
		{
			name: "another provider's signature is not sent, the call is", recording: "function_call.sse",
			edit: func(p *conversation.ProviderPayload) { p.Provider = "openai" },
			want: `[` + question + `, {"role": "model", "parts": [
				{"text": "I'll check the weather in Paris for you."},
				` + call + `}
			]}, ` + callResult + `]`,
		},
		{
			name: "another provider's reasoning is not sent, the text is", recording: "thinking.sse",
			edit: func(p *conversation.ProviderPayload) { p.Provider = "anthropic" },
			want: `[` + question + `, {"role": "model", "parts": [{"text": "2 + 2 = 4."}]}, ` + next + `]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{}, llmtest.Streamed(t, tt.recording), llmtest.Streamed(t, "text.sse"))
			resp := firstAnswer(t, b)
			if _, err := llmtest.Drain(t, context.Background(), b.client, searchRequest(answered(resp, tt.edit))); err != nil {
				t.Fatalf("second request: %v", err)
			}
			reqs := b.fake.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			var body struct{ Contents any }
			if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
				t.Fatalf("request body: %v", err)
			}
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatalf("want: %v", err)
			}
			if diff := cmp.Diff(want, body.Contents); diff != "" {
				t.Errorf("contents of the second request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReplayRefused checks that a payload of this adapter that cannot go
// back as it came is refused before the request is sent, with an error
// that names its place, the provider, the format or the version: never
// dropped, never taken for an unavailable provider.
func TestReplayRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		recording string
		edit      func(*conversation.ProviderPayload)
		errHas    string
	}{
		{
			name: "a call's signature that does not decode", recording: "function_call.sse",
			edit:   func(p *conversation.ProviderPayload) { p.Value = json.RawMessage(`12345`) },
			errHas: "gemini: request refused: messages[1].tool_calls[0]: a gemini thought_signature payload whose value is not a base64 string",
		},
		{
			name: "a thought's signature that does not decode", recording: "thinking.sse",
			edit:   func(p *conversation.ProviderPayload) { p.Value = json.RawMessage(`"not base64!"`) },
			errHas: "messages[1].reasoning[0]: a gemini thought_signature payload whose value is not a base64 string",
		},
		{
			name: "a signature of an unknown version", recording: "function_call.sse",
			edit:   func(p *conversation.ProviderPayload) { p.Version = "v2" },
			errHas: `messages[1].tool_calls[0]: a gemini thought_signature payload of version "v2", which this adapter cannot continue (it continues "v1beta" and payloads without a version`,
		},
		{
			name: "a payload of an unknown format", recording: "thinking.sse",
			edit:   func(p *conversation.ProviderPayload) { p.Format = "grounding" },
			errHas: `messages[1].reasoning[0]: a gemini payload of the unknown format "grounding" (this adapter knows "thought_signature"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{}, llmtest.Streamed(t, tt.recording))
			resp := firstAnswer(t, b)
			_, err := llmtest.Drain(t, context.Background(), b.client, searchRequest(answered(resp, tt.edit)))
			if !errors.Is(err, ErrBadRequest) || !errors.Is(err, ErrPayload) || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error %v, want ErrBadRequest and ErrPayload with %q", err, tt.errHas)
			}
			if n := len(b.fake.Requests()); n != 1 {
				t.Errorf("%d requests, want the first alone", n)
			}
		})
	}
}
