package gemini

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

func text(role conversation.MessageRole, s string) conversation.Message {
	return conversation.Message{Role: role, Content: []conversation.Block{conversation.TextBlock(s)}}
}

// sent runs req against a fake server and returns the decoded request body,
// the headers (lower-case names) and the query it received.
func sent(t *testing.T, cfg Config, req *llm.Request) (body map[string]any, header map[string]string, query string) {
	t.Helper()
	b := setup(t, cfg, llmtest.Streamed(t, "text.sse"))
	if _, err := llmtest.Drain(t, context.Background(), b.client, req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	got := b.fake.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	if err := json.Unmarshal(got[0].Body, &body); err != nil {
		t.Fatalf("request body: %v\n%s", err, got[0].Body)
	}
	header = map[string]string{}
	for k := range got[0].Header {
		header[strings.ToLower(k)] = got[0].Header.Get(k)
	}
	return body, header, got[0].Query
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("want: %v", err)
	}
	return v
}

// TestRequestMapping checks the request a whole conversation maps to:
// system instruction, merged user and model turns, function calls with
// their ids, arguments and signatures, function responses first in their
// user turn under output or error, corrections as "[system] " user text,
// Gemini's reasoning replayed with its signature and other providers' not,
// function declarations with their raw schemas, generation settings.
func TestRequestMapping(t *testing.T) {
	t.Parallel()
	temp := 0.2
	req := &llm.Request{
		System: "You are Ford.",
		Messages: []conversation.Message{
			text(conversation.MessageUser, "What is the weather in Paris and the time?"),
			text(conversation.MessageUser, "[operator message]\nBe brief."),
			{
				Role: conversation.MessageAssistant,
				Reasoning: []conversation.Reasoning{
					{Text: "Two tools.", Payload: sigPayload("c2lnLXRob3VnaHQ=")},
					{Text: "From Anthropic.", Signature: "sig-anthropic"},
					{Text: "From another adapter.", Payload: &conversation.ProviderPayload{Provider: "openai", Format: "thought_signature", Value: json.RawMessage(`"eA=="`)}},
				},
				Content: []conversation.Block{conversation.TextBlock("Checking.")},
				ToolCalls: []conversation.ToolCall{
					{ID: "call_r1_0", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris","days":200}`), Payload: sigPayload("c2lnLWNhbGw=")},
					{ID: "call_r1_1", Name: "get_time", Arguments: json.RawMessage(`{"tz": "Europe/Par`)},
					{ID: "call_r1_2", Name: "ping"},
				},
			},
			{Role: conversation.MessageTool, ToolCallID: "call_r1_0", ToolName: "get_weather", Content: []conversation.Block{conversation.TextBlock("Sunny, 18°C")}},
			{Role: conversation.MessageTool, ToolCallID: "call_r1_1", ToolName: "get_time", IsError: true, Content: []conversation.Block{conversation.TextBlock("invalid arguments")}},
			{Role: conversation.MessageTool, ToolCallID: "call_r1_2"}, // no name: found from the call
			text(conversation.MessageSystem, "Call respond to answer."),
			{
				Role:      conversation.MessageAssistant,
				Reasoning: []conversation.Reasoning{{Payload: sigPayload("c2lnLXRleHQ=")}}, // a signature of the text
				Content:   []conversation.Block{conversation.TextBlock("It is sunny.")},
			},
			text(conversation.MessageAssistant, "Anything else?"),
			text(conversation.MessageUser, ""),
		},
		Tools: []llm.ToolDef{{
			Name: "get_weather", Description: "Weather of a place.",
			Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"},"days":{"type":"integer","maximum":200}},"required":["location"],"additionalProperties":false}`),
		}, {Name: "ping"}},
		Params: llm.Params{Temperature: &temp, MaxTokens: 512},
	}
	body, header, query := sent(t, Config{}, req)
	want := decode(t, `{
		"systemInstruction": {"role": "user", "parts": [{"text": "You are Ford."}]},
		"contents": [
			{"role": "user", "parts": [
				{"text": "What is the weather in Paris and the time?"},
				{"text": "[operator message]\nBe brief."}
			]},
			{"role": "model", "parts": [
				{"text": "Two tools.", "thought": true, "thoughtSignature": "c2lnLXRob3VnaHQ="},
				{"text": "Checking."},
				{"functionCall": {"id": "call_r1_0", "name": "get_weather", "args": {"location": "Paris", "days": 200}}, "thoughtSignature": "c2lnLWNhbGw="},
				{"functionCall": {"id": "call_r1_1", "name": "get_time", "args": {"_raw": "{\"tz\": \"Europe/Par"}}},
				{"functionCall": {"id": "call_r1_2", "name": "ping"}}
			]},
			{"role": "user", "parts": [
				{"functionResponse": {"id": "call_r1_0", "name": "get_weather", "response": {"output": "Sunny, 18°C"}}},
				{"functionResponse": {"id": "call_r1_1", "name": "get_time", "response": {"error": "invalid arguments"}}},
				{"functionResponse": {"id": "call_r1_2", "name": "ping", "response": {"output": "Tool executed successfully."}}},
				{"text": "[system] Call respond to answer."}
			]},
			{"role": "model", "parts": [
				{"text": "It is sunny.", "thoughtSignature": "c2lnLXRleHQ="},
				{"text": "Anything else?"}
			]}
		],
		"tools": [{"functionDeclarations": [
			{"name": "get_weather", "description": "Weather of a place.", "parametersJsonSchema": {
				"type": "object",
				"properties": {"location": {"type": "string"}, "days": {"type": "integer", "maximum": 200}},
				"required": ["location"],
				"additionalProperties": false
			}},
			{"name": "ping"}
		]}],
		"generationConfig": {
			"temperature": 0.2,
			"maxOutputTokens": 512,
			"thinkingConfig": {"includeThoughts": true}
		}
	}`)
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if header["x-goog-api-key"] != testKey {
		t.Errorf("x-goog-api-key = %q, want the API key", header["x-goog-api-key"])
	}
	if query != "alt=sse" {
		t.Errorf("query %q, want alt=sse", query)
	}
}

// TestRequestWebSearch checks that the hosted web_search is the
// googleSearch tool, beside the function declarations.
func TestRequestWebSearch(t *testing.T) {
	t.Parallel()
	req := llmtest.UserRequest("Who won Euro 2024?")
	req.Tools = []llm.ToolDef{{Name: "respond", Schema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)}}
	req.Params.HostedTools = []string{"web_search"}
	body, _, _ := sent(t, Config{OmitThoughts: true, MaxTokens: 1000}, req)
	want := decode(t, `{
		"contents": [{"role": "user", "parts": [{"text": "Who won Euro 2024?"}]}],
		"tools": [
			{"functionDeclarations": [{"name": "respond", "parametersJsonSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}]},
			{"googleSearch": {}}
		],
		"generationConfig": {"maxOutputTokens": 1000}
	}`)
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestRequestModel checks that the request's model wins over the
// configured one, and that nothing unset is sent.
func TestRequestModel(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{OmitThoughts: true}, llmtest.Streamed(t, "text.sse"))
	req := llmtest.UserRequest("hi")
	req.Params.Model = "gemini-other"
	_, err := llmtest.Drain(t, context.Background(), b.client, req)
	// The fake serves only the configured model's path.
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("error %v, want the fake's 404 for another model's path", err)
	}
	got := b.fake.Requests()
	var body map[string]any
	if err := json.Unmarshal(got[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	// The SDK always sends a generationConfig, empty here.
	if diff := cmp.Diff(decode(t, `{"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {}}`), body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestRequestRefused checks requests refused before any call.
func TestRequestRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cfg    Config
		req    *llm.Request
		errHas string
	}{
		{
			name: "no model", cfg: Config{Model: "-"},
			req: llmtest.UserRequest("hi"), errHas: "no model named",
		},
		{
			name: "a hosted tool other than web_search",
			req: &llm.Request{
				Messages: llmtest.UserRequest("hi").Messages,
				Params:   llm.Params{HostedTools: []string{"web_search", "code_execution"}},
			},
			errHas: `hosted tool "code_execution" is not supported; Gemini runs only "web_search"`,
		},
		{
			name:   "a schema that is not an object",
			req:    &llm.Request{Messages: llmtest.UserRequest("hi").Messages, Tools: []llm.ToolDef{{Name: "a", Schema: json.RawMessage(`[1]`)}}},
			errHas: `tools[0] "a": the schema must be a JSON object`,
		},
		{
			name:   "a schema of another type",
			req:    &llm.Request{Messages: llmtest.UserRequest("hi").Messages, Tools: []llm.ToolDef{{Name: "a", Schema: json.RawMessage(`{"type":"string"}`)}}},
			errHas: `the schema's type must be "object"`,
		},
		{
			name:   "an unknown role",
			req:    &llm.Request{Messages: []conversation.Message{text("robot", "beep")}},
			errHas: `messages[0] has the unknown role "robot"`,
		},
		{
			name:   "a tool result of no known call",
			req:    &llm.Request{Messages: []conversation.Message{text(conversation.MessageUser, "hi"), {Role: conversation.MessageTool, ToolCallID: "call_x"}}},
			errHas: `messages[1]: the result of call "call_x" names no tool`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.cfg)
			if tt.cfg.Model == "-" {
				cp := *b.client
				cp.model = ""
				b.client = &cp
			}
			_, err := llmtest.Drain(t, context.Background(), b.client, tt.req)
			if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error %v, want ErrBadRequest with %q", err, tt.errHas)
			}
			if n := len(b.fake.Requests()); n != 0 {
				t.Errorf("%d requests, want none", n)
			}
		})
	}
}
