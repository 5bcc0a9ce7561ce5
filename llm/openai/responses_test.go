package openai

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

// searchConversation uses every message kind of the provider view, with
// reasoning of OpenAI's Responses API (logged before payloads recorded
// their version) and of another provider.
func searchConversation() *llm.Request {
	temp := 0.3
	openaiReasoning := &conversation.ProviderPayload{Provider: "openai", Format: "reasoning", Value: json.RawMessage(`{"id":"rs_1","encrypted_content":"gAAAA-enc"}`)}
	return &llm.Request{
		System: "You answer with sources.",
		Messages: []conversation.Message{
			{Role: conversation.MessageUser, Content: text("How tall is the Eiffel Tower, and the weather there?")},
			{
				Role:    conversation.MessageAssistant,
				Content: text("Let me check."),
				Reasoning: []conversation.Reasoning{
					{Text: "Need the weather tool.", Payload: openaiReasoning},
					{Text: "thinking of another provider", Signature: "sig", Payload: &conversation.ProviderPayload{Provider: "anthropic", Format: "thinking"}},
					{Text: "reasoning of a compatible server"},
				},
				ToolCalls: []conversation.ToolCall{
					{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris"}`)},
					{ID: "call_2", Name: "get_time"},
				},
			},
			{Role: conversation.MessageTool, ToolCallID: "call_1", ToolName: "get_weather", Content: text("18°C, cloudy")},
			{Role: conversation.MessageTool, ToolCallID: "call_2", ToolName: "get_time", IsError: true, Content: text("time service unreachable")},
			{Role: conversation.MessageAssistant, Reasoning: []conversation.Reasoning{{Payload: openaiReasoning}}}, // reasoning alone: dropped
			{Role: conversation.MessageAssistant, Content: text("It is 330 m tall and 18°C.")},
			{Role: conversation.MessageSystem, Content: text("You must end your turn by calling the respond tool.")},
		},
		Tools: []llm.ToolDef{
			{
				Name:        "get_weather",
				Description: "Current weather of a place.",
				Schema:      json.RawMessage(`{"type":"object","properties":{"location":{"type":"string","maxLength":200}},"required":["location"]}`),
			},
			{Name: "get_time"}, // no description, no schema
		},
		Params: llm.Params{Model: "gpt-4.1", Temperature: &temp, MaxTokens: 2048, HostedTools: []string{"web_search", "web_search"}},
	}
}

// wantSearchRequest is the Responses API request of searchConversation.
const wantSearchRequest = `{
  "model": "gpt-4.1",
  "stream": true,
  "store": false,
  "instructions": "You answer with sources.",
  "temperature": 0.3,
  "max_output_tokens": 2048,
  "input": [
    {"role": "user", "content": "How tall is the Eiffel Tower, and the weather there?"},
    {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-enc", "summary": [{"type": "summary_text", "text": "Need the weather tool."}]},
    {"type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}]},
    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"location\":\"Paris\"}"},
    {"type": "function_call", "call_id": "call_2", "name": "get_time", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "18°C, cloudy"},
    {"type": "function_call_output", "call_id": "call_2", "output": "Error: time service unreachable"},
    {"type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "It is 330 m tall and 18°C.", "annotations": []}]},
    {"role": "system", "content": "You must end your turn by calling the respond tool."}
  ],
  "tools": [
    {"type": "function", "name": "get_weather", "description": "Current weather of a place.", "strict": false,
     "parameters": {"type": "object", "properties": {"location": {"type": "string", "maxLength": 200}}, "required": ["location"]}},
    {"type": "function", "name": "get_time", "strict": false, "parameters": {"type": "object", "properties": {}}},
    {"type": "web_search"}
  ]
}`

// TestResponseRequestBody checks the Responses API request sent on the
// wire, and its path and headers.
func TestResponseRequestBody(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Model: "default-model"}, llmtest.Streamed(t, "responses_web_search.sse"))
	if _, err := llmtest.Drain(t, context.Background(), b.client, searchConversation()); err != nil {
		t.Fatal(err)
	}
	reqs := b.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if reqs[0].Path != "/v1/responses" {
		t.Errorf("path = %q, want /v1/responses", reqs[0].Path)
	}
	if got, want := reqs[0].Header.Get("Authorization"), "Bearer "+testKey; got != want {
		t.Errorf("Authorization header is not the bearer key (got %d bytes)", len(got)) // never print the key
	}
	var got, want any
	if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(wantSearchRequest), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestResponseParams covers the choices responseParams makes without the
// network.
func TestResponseParams(t *testing.T) {
	t.Parallel()
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "llama3"})
	if err != nil {
		t.Fatal(err)
	}
	search := func(r *llm.Request) *llm.Request {
		r.Params.HostedTools = append(r.Params.HostedTools, "web_search")
		return r
	}
	tests := []struct {
		name    string
		req     *llm.Request
		want    []string // substrings of the JSON body
		notWant []string
		err     string
	}{
		{
			name: "the default model, no optional settings", req: search(llmtest.UserRequest("hi")),
			want:    []string{`"model":"llama3"`, `"store":false`, `"tools":[{"type":"web_search"}]`},
			notWant: []string{`"instructions"`, `"temperature"`, `"max_output_tokens"`, `"include"`, `"reasoning"`},
		},
		{
			name: "an unknown hosted tool", req: &llm.Request{Params: llm.Params{HostedTools: []string{"web_search", "file_search"}}},
			err: `hosted tool "file_search" is unknown to the OpenAI adapter; it knows "web_search"`,
		},
		{
			name: "a function tool named like the hosted tool",
			req:  search(&llm.Request{Tools: []llm.ToolDef{{Name: "lookup"}, {Name: "web_search"}}}),
			err:  `tools[1] "web_search": the name is the hosted web_search tool's`,
		},
		{
			name: "a schema that is not an object",
			req:  search(&llm.Request{Tools: []llm.ToolDef{{Name: "t", Schema: json.RawMessage(`"x"`)}}}),
			err:  `tools[0] "t": the schema must be a JSON object`,
		},
		{
			name: "an unknown role",
			req:  search(&llm.Request{Messages: []conversation.Message{{Role: "critic", Content: text("x")}}}),
			err:  `messages[0] has the unknown role "critic"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := c.responseParams(tt.req)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrBadRequest) {
					t.Fatalf("err = %v, want ErrBadRequest containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.want {
				if !strings.Contains(string(body), s) {
					t.Errorf("body lacks %s: %s", s, body)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(string(body), s) {
					t.Errorf("body has %s: %s", s, body)
				}
			}
		})
	}
}

// TestReasoningRoundTrip checks that reasoning streamed by the Responses
// API goes back as the reasoning item it came from.
func TestReasoningRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{}, llmtest.Streamed(t, "responses_function_call.sse"), llmtest.Streamed(t, "responses_search_failed.sse"))
	resp, err := llm.Collect(b.client.Generate(context.Background(), searchRequest("Weather in Paris?")))
	if err != nil {
		t.Fatal(err)
	}
	next := searchRequest("Weather in Paris?")
	next.Messages = append(next.Messages,
		conversation.Message{Role: conversation.MessageAssistant, Reasoning: resp.Reasoning, ToolCalls: resp.ToolCalls},
		conversation.Message{Role: conversation.MessageTool, ToolCallID: resp.ToolCalls[0].ID, Content: text("18°C")},
	)
	if _, err := llm.Collect(b.client.Generate(context.Background(), next)); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(b.fake.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "reasoning", "id": "rs_68f1c3b1a2b38190c4d5e6f708192a3b",
		"encrypted_content": "gAAAAABo8cOzR3lqYXRhX2VuY3J5cHRlZF9yZWFzb25pbmdfYmxvYl9mb3JfcmVwbGF5X29ubHk=",
		"summary":           []any{map[string]any{"type": "summary_text", "text": "**Checking the weather**\n\nThe user wants Paris weather; I will call get_weather."}},
	}
	if len(body.Input) != 4 {
		t.Fatalf("%d input items, want 4 (user, reasoning, call, output): %v", len(body.Input), body.Input)
	}
	if diff := cmp.Diff(want, body.Input[1]); diff != "" {
		t.Errorf("reasoning item (-want +got):\n%s", diff)
	}
}
