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

func text(role conversation.MessageRole, s string) conversation.Message {
	return conversation.Message{Role: role, Content: []conversation.Block{conversation.TextBlock(s)}}
}

// sent runs req against a fake server and returns the decoded request body
// and the headers it received.
func sent(t *testing.T, cfg Config, req *llm.Request) (map[string]any, map[string]string) {
	t.Helper()
	b := setup(t, cfg, llmtest.Streamed(t, "text.sse"))
	if _, err := llmtest.Drain(t, context.Background(), b.client, req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	got := b.fake.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	var body map[string]any
	if err := json.Unmarshal(got[0].Body, &body); err != nil {
		t.Fatalf("request body: %v\n%s", err, got[0].Body)
	}
	h := map[string]string{}
	for k := range got[0].Header {
		h[strings.ToLower(k)] = got[0].Header.Get(k)
	}
	return body, h
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("want: %v", err)
	}
	return v
}

// TestRequestMapping checks the Messages request a whole conversation maps
// to: system prompt, merged alternating turns, tool results first in their
// user turn with is_error, corrections as "[system] " user text, tool_use
// inputs, thinking replayed with its signature, tools, max_tokens.
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
					{Text: "Two tools.", Signature: "sig-1"},
					{Text: "From another provider, unsigned."},
				},
				Content: []conversation.Block{conversation.TextBlock("Checking.")},
				ToolCalls: []conversation.ToolCall{
					{ID: "toolu_a", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris","days":200}`)},
					{ID: "toolu_b", Name: "get_time", Arguments: json.RawMessage(`{"tz": "Europe/Par`)},
					{ID: "toolu_c", Name: "ping"},
				},
			},
			{Role: conversation.MessageTool, ToolCallID: "toolu_a", ToolName: "get_weather", Content: []conversation.Block{conversation.TextBlock("Sunny, 18°C")}},
			{Role: conversation.MessageTool, ToolCallID: "toolu_b", ToolName: "get_time", IsError: true, Content: []conversation.Block{conversation.TextBlock("invalid arguments")}},
			{Role: conversation.MessageTool, ToolCallID: "toolu_c", ToolName: "ping"},
			text(conversation.MessageSystem, "Call respond to answer."),
			text(conversation.MessageAssistant, "It is sunny."),
			text(conversation.MessageAssistant, "Anything else?"),
			text(conversation.MessageUser, ""),
		},
		Tools: []llm.ToolDef{{
			Name: "get_weather", Description: "Weather of a place.",
			Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"},"days":{"type":"integer","maximum":200}},"required":["location"],"additionalProperties":false}`),
		}, {Name: "ping"}},
		Params: llm.Params{Temperature: &temp},
	}
	body, header := sent(t, Config{}, req)
	want := decode(t, `{
		"model": "claude-test",
		"max_tokens": 4096,
		"stream": true,
		"temperature": 0.2,
		"system": [{"type": "text", "text": "You are Ford.", "cache_control": {"type": "ephemeral"}}],
		"messages": [
			{"role": "user", "content": [
				{"type": "text", "text": "What is the weather in Paris and the time?"},
				{"type": "text", "text": "[operator message]\nBe brief."}
			]},
			{"role": "assistant", "content": [
				{"type": "thinking", "thinking": "Two tools.", "signature": "sig-1"},
				{"type": "text", "text": "Checking."},
				{"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"location": "Paris", "days": 200}},
				{"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {"_raw": "{\"tz\": \"Europe/Par"}},
				{"type": "tool_use", "id": "toolu_c", "name": "ping", "input": {}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_a", "is_error": false, "content": [{"type": "text", "text": "Sunny, 18°C"}]},
				{"type": "tool_result", "tool_use_id": "toolu_b", "is_error": true, "content": [{"type": "text", "text": "invalid arguments"}]},
				{"type": "tool_result", "tool_use_id": "toolu_c", "is_error": false, "content": [{"type": "text", "text": "Tool executed successfully."}]},
				{"type": "text", "text": "[system] Call respond to answer."}
			]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "It is sunny."},
				{"type": "text", "text": "Anything else?"}
			]}
		],
		"tools": [
			{"name": "get_weather", "description": "Weather of a place.", "input_schema": {
				"type": "object",
				"properties": {"location": {"type": "string"}, "days": {"type": "integer", "maximum": 200}},
				"required": ["location"],
				"additionalProperties": false
			}},
			{"name": "ping", "input_schema": {"type": "object", "properties": {}}}
		]
	}`)
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if header["anthropic-version"] != "2026-10-21" {
		t.Errorf("anthropic-version = %q, want 2026-10-21, the version redacted thinking payloads record", header["anthropic-version"])
	}
	if header["x-api-key"] != testKey {
		t.Errorf("x-api-key = %q, want the API key (the header the Messages API documents)", header["x-api-key"])
	}
}

// TestRequestResultsFirst checks that tool results go before other user
// text of their turn, whatever the order of the provider view.
func TestRequestResultsFirst(t *testing.T) {
	t.Parallel()
	req := &llm.Request{Messages: []conversation.Message{
		text(conversation.MessageUser, "hi"),
		{Role: conversation.MessageAssistant, ToolCalls: []conversation.ToolCall{{ID: "toolu_1", Name: "a", Arguments: json.RawMessage(`{}`)}}},
		text(conversation.MessageUser, "[process_event from w1]\ndone"),
		{Role: conversation.MessageTool, ToolCallID: "toolu_1", IsError: true},
	}}
	body, _ := sent(t, Config{MaxTokens: 1000}, req)
	want := decode(t, `{"role": "user", "content": [
		{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": [{"type": "text", "text": "Tool failed."}]},
		{"type": "text", "text": "[process_event from w1]\ndone", "cache_control": {"type": "ephemeral"}}
	]}`)
	msgs := body["messages"].([]any)
	if diff := cmp.Diff(want, msgs[len(msgs)-1]); diff != "" {
		t.Errorf("last turn (-want +got):\n%s", diff)
	}
	if got := body["max_tokens"]; got != 1000.0 {
		t.Errorf("max_tokens %v, want Config.MaxTokens 1000", got)
	}
}

// TestRequestCacheBreakpoints checks where the prompt cache is asked for:
// the system prompt and the last block of a last user turn, whatever that
// block is, and nowhere else.
func TestRequestCacheBreakpoints(t *testing.T) {
	t.Parallel()
	call := conversation.Message{Role: conversation.MessageAssistant, ToolCalls: []conversation.ToolCall{{ID: "toolu_1", Name: "a", Arguments: json.RawMessage(`{}`)}}}
	result := conversation.Message{Role: conversation.MessageTool, ToolCallID: "toolu_1", Content: []conversation.Block{conversation.TextBlock("42")}}
	tests := []struct {
		name string
		req  *llm.Request
		want int // breakpoints in the messages: on their last block
	}{
		{name: "a tool result last", req: &llm.Request{System: "S", Messages: []conversation.Message{text(conversation.MessageUser, "hi"), call, result}}, want: 1},
		{name: "an assistant turn last", req: &llm.Request{Messages: []conversation.Message{text(conversation.MessageUser, "hi"), text(conversation.MessageAssistant, "Hello")}}},
		{name: "no messages", req: &llm.Request{System: "S"}},
	}
	for _, tt := range tests {
		body, _ := sent(t, Config{}, tt.req)
		raw, _ := json.Marshal(body)
		marked := strings.Count(string(raw), `"cache_control"`)
		system := 0
		if tt.req.System != "" {
			system = 1
			sys := body["system"].([]any)
			if _, ok := sys[len(sys)-1].(map[string]any)["cache_control"]; !ok {
				t.Errorf("%s: the system prompt carries no cache_control", tt.name)
			}
		}
		if marked != system+tt.want {
			t.Errorf("%s: %d cache_control marks, want %d: %s", tt.name, marked, system+tt.want, raw)
		}
		if tt.want == 1 {
			msgs := body["messages"].([]any)
			blocks := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
			if _, ok := blocks[len(blocks)-1].(map[string]any)["cache_control"]; !ok {
				t.Errorf("%s: the last block carries no cache_control: %s", tt.name, raw)
			}
		}
	}
}

// TestRequestOverrides checks that the request's model and max tokens win
// over the configured ones.
func TestRequestOverrides(t *testing.T) {
	t.Parallel()
	req := llmtest.UserRequest("hi")
	req.Params = llm.Params{Model: "claude-other", MaxTokens: 256}
	body, _ := sent(t, Config{}, req)
	if body["model"] != "claude-other" || body["max_tokens"] != 256.0 {
		t.Errorf("model %v, max_tokens %v; want claude-other, 256", body["model"], body["max_tokens"])
	}
	if _, ok := body["temperature"]; ok {
		t.Error("temperature sent though none was set")
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
			name: "a hosted tool this adapter does not know",
			req: &llm.Request{
				Messages: llmtest.UserRequest("hi").Messages,
				Params:   llm.Params{HostedTools: []string{"web_search", "code_interpreter"}},
			},
			errHas: `model.hosted_tools: "code_interpreter" is not a hosted tool of anthropic (supported: web_search)`,
		},
		{
			name: "a function tool named like the hosted web search",
			req: &llm.Request{
				Messages: llmtest.UserRequest("hi").Messages,
				Tools:    []llm.ToolDef{{Name: "lookup"}, {Name: "web_search"}},
				Params:   llm.Params{HostedTools: []string{"web_search"}},
			},
			errHas: `tools[1] "web_search": the name is the hosted web_search tool's; rename the tool or remove web_search from model.hosted_tools`,
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.cfg)
			if tt.cfg.Model == "-" {
				b.client = withoutModel(b.client)
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

// withoutModel is c without a default model.
func withoutModel(c *Client) *Client {
	cp := *c
	cp.model = ""
	return &cp
}

// TestRequestHostedWebSearch checks that the hosted web_search tool goes
// out as Anthropic's server tool, once, after the function tools.
func TestRequestHostedWebSearch(t *testing.T) {
	t.Parallel()
	req := llmtest.UserRequest("What is the weather in Paris?")
	req.Tools = []llm.ToolDef{{Name: "respond"}}
	req.Params.HostedTools = []string{"web_search", "web_search"}
	body, _ := sent(t, Config{}, req)
	want := decode(t, `{"tools": [
		{"name": "respond", "input_schema": {"type": "object", "properties": {}}},
		{"type": "web_search_20250305", "name": "web_search"}
	]}`)
	if diff := cmp.Diff(want["tools"], body["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestRequestReplaysReasoning checks which reasoning of an assistant
// message goes back, in order: redacted thinking of this provider as
// redacted_thinking, signed thinking as thinking; reasoning carrying
// another provider's payload, unsigned reasoning and payloads of an unknown
// format are not sent.
func TestRequestReplaysReasoning(t *testing.T) {
	t.Parallel()
	redacted := func(provider, format, value string) conversation.Reasoning {
		return conversation.Reasoning{Payload: &conversation.ProviderPayload{Provider: provider, Format: format, Value: json.RawMessage(value)}}
	}
	openai := redacted("openai", "reasoning", `{"encrypted_content":"gAAAA"}`)
	openai.Text, openai.Signature = "OpenAI's summary.", "not-anthropic's"
	req := &llm.Request{Messages: []conversation.Message{
		text(conversation.MessageUser, "hi"),
		{
			Role: conversation.MessageAssistant,
			Reasoning: []conversation.Reasoning{
				redacted("anthropic", "redacted_thinking", `"EmwKAhgBEgy3va3pzix/LafPsn4a"`),
				{Text: "Signed.", Signature: "sig-2"},
				openai,
				redacted("anthropic", "thinking_v9", `{"x":1}`),
				{Text: "Unsigned."},
				redacted("anthropic", "redacted_thinking", `"EmwKAhgBEgzSecond"`),
			},
			Content: []conversation.Block{conversation.TextBlock("Hello.")},
		},
		text(conversation.MessageUser, "again"),
	}}
	body, _ := sent(t, Config{}, req)
	want := decode(t, `{"role": "assistant", "content": [
		{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
		{"type": "thinking", "thinking": "Signed.", "signature": "sig-2"},
		{"type": "redacted_thinking", "data": "EmwKAhgBEgzSecond"},
		{"type": "text", "text": "Hello."}
	]}`)
	if diff := cmp.Diff(want, body["messages"].([]any)[1]); diff != "" {
		t.Errorf("assistant turn (-want +got):\n%s", diff)
	}
}

// TestRedactedRoundTrip checks that the reasoning a redacted_thinking block
// streams as goes back to the API as the same block.
func TestRedactedRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{}, llmtest.Streamed(t, "redacted_thinking.sse"), llmtest.Streamed(t, "text.sse"))
	first, err := llm.Collect(b.client.Generate(context.Background(), llmtest.UserRequest("hi")))
	if err != nil {
		t.Fatal(err)
	}
	req := llmtest.UserRequest("hi")
	req.Messages = append(req.Messages,
		conversation.Message{Role: conversation.MessageAssistant, Reasoning: first.Reasoning, Content: []conversation.Block{conversation.TextBlock(first.Text)}},
		text(conversation.MessageUser, "more"))
	if _, err := llmtest.Drain(t, context.Background(), b.client, req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b.fake.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	sentBlock := string(body.Messages[1].Content[0])
	wantBlock := recorded(t, "redacted_thinking.sse", "content_block_start", "content_block")[0]
	if diff := cmp.Diff(decode(t, wantBlock), decode(t, sentBlock)); diff != "" {
		t.Errorf("replayed block (-streamed +sent):\n%s", diff)
	}
}
