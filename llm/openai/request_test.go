package openai

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

func text(s string) []conversation.Block { return []conversation.Block{conversation.TextBlock(s)} }

// fullRequest uses every message kind of the provider view.
func fullRequest() *llm.Request {
	temp := 0.2
	return &llm.Request{
		System: "You are a weather assistant. End every turn with respond.",
		Messages: []conversation.Message{
			{Role: conversation.MessageUser, Content: text("Weather and time in Paris?")},
			{
				Role:      conversation.MessageAssistant,
				Content:   text("Let me look."),
				Reasoning: []conversation.Reasoning{{Text: "two lookups"}}, // not sent back
				ToolCalls: []conversation.ToolCall{
					{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris"}`)},
					{ID: "call_2", Name: "get_time", Arguments: json.RawMessage(`{}`)},
				},
			},
			{Role: conversation.MessageTool, ToolCallID: "call_1", ToolName: "get_weather", Content: []conversation.Block{
				conversation.TextBlock("18°C, cloudy"), conversation.MarkdownBlock("| wind | 12 km/h |"),
			}},
			{Role: conversation.MessageTool, ToolCallID: "call_2", ToolName: "get_time", IsError: true, Content: text("time service unreachable")},
			{Role: conversation.MessageAssistant, Content: text("It is 18°C and cloudy.")},
			{Role: conversation.MessageSystem, Content: text("You must end your turn by calling the respond tool.")},
			{Role: conversation.MessageAssistant, Reasoning: []conversation.Reasoning{{Text: "only thinking"}}}, // dropped
			{Role: conversation.MessageAssistant, ToolCalls: []conversation.ToolCall{
				{ID: "call_3", Name: "respond", Arguments: json.RawMessage(`{"message":"18°C, cloudy."}`)},
			}},
			{Role: conversation.MessageTool, ToolCallID: "call_3", ToolName: "respond", IsError: true, Content: text("Error: message too short")},
			{Role: conversation.MessageUser, Content: text("[operator message from ops]\nBe brief.")},
		},
		Tools: []llm.ToolDef{
			{
				Name:        "get_weather",
				Description: "Current weather of a place.",
				Schema:      json.RawMessage(`{"type":"object","properties":{"location":{"type":"string","maxLength":200}},"required":["location"],"additionalProperties":false}`),
			},
			{Name: "get_time"}, // no description, no schema
		},
		Params: llm.Params{Model: "gpt-4.1-mini", Temperature: &temp, MaxTokens: 512},
	}
}

// TestRequestBody checks the request sent on the wire against a golden file
// (rewrite it with -update), and the headers.
func TestRequestBody(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Model: "default-model"}, llmtest.Streamed(t, "text.sse"))
	if _, err := llmtest.Drain(t, context.Background(), b.client, fullRequest()); err != nil {
		t.Fatal(err)
	}
	reqs := b.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if reqs[0].Path != "/v1/chat/completions" {
		t.Errorf("path = %q, want /v1/chat/completions", reqs[0].Path)
	}
	if got, want := reqs[0].Header.Get("Authorization"), "Bearer "+testKey; got != want {
		t.Errorf("Authorization header is not the bearer key (got %d bytes)", len(got)) // never print the key
	}
	if got := reqs[0].Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}

	var got any
	if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	golden := filepath.Join("testdata", "request.golden.json")
	if *update {
		out, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(golden, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-golden +got):\n%s", diff)
	}
}

// TestRequestParams covers the choices params makes without the network.
func TestRequestParams(t *testing.T) {
	t.Parallel()
	official, err := New(Config{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	compatible, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "llama3"})
	if err != nil {
		t.Fatal(err)
	}
	withTokens := func(model string) *llm.Request {
		r := llmtest.UserRequest("hi")
		r.Params = llm.Params{Model: model, MaxTokens: 100}
		return r
	}

	tests := []struct {
		name    string
		client  *Client
		req     *llm.Request
		want    []string // substrings of the JSON body
		notWant []string
		err     string
	}{
		{
			name: "OpenAI's API gets max_completion_tokens", client: official, req: withTokens("gpt-4.1"),
			want:    []string{`"max_completion_tokens":100`, `"model":"gpt-4.1"`, `"stream_options":{"include_usage":true}`},
			notWant: []string{`"max_tokens"`, `"temperature"`, `"tools"`},
		},
		{
			name: "a compatible server gets max_tokens and the default model", client: compatible, req: withTokens(""),
			want: []string{`"max_tokens":100`, `"model":"llama3"`}, notWant: []string{`max_completion_tokens`},
		},
		{name: "no model anywhere", client: official, req: llmtest.UserRequest("hi"), err: "no model named"},
		{
			name: "a schema that is not an object", client: compatible,
			req: &llm.Request{Tools: []llm.ToolDef{{Name: "t", Schema: json.RawMessage(`[1]`)}}},
			err: `tools[0] "t": the schema must be a JSON object`,
		},
		{
			name: "an unknown role", client: compatible,
			req: &llm.Request{Messages: []conversation.Message{{Role: "critic", Content: text("x")}}},
			err: `messages[0] has the unknown role "critic"`,
		},
		{
			// What the Responses API produced has no place here: the text
			// alone goes, and a payload that would not go back is not read.
			name: "the Responses API's items are not sent, only the text", client: compatible,
			req: &llm.Request{Messages: []conversation.Message{{
				Role: conversation.MessageAssistant, Content: text("Größe (wiki)"),
				Reasoning: []conversation.Reasoning{{Text: "r", Payload: rsPayload()}},
				Hosted:    []conversation.HostedActivity{{ActivityID: "ws_1", Name: "web_search", State: conversation.ActivityCompleted, Payload: wsPayload()}},
				Citations: []conversation.Citation{{Range: &conversation.Range{Start: 7, End: 13}, Replay: own("url_citation", "responses.annotation.v1", `12345`)}},
			}}},
			want:    []string{`"content":"Größe (wiki)"`},
			notWant: []string{`rs_1`, `ws_1`, `12345`, `annotations`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := tt.client.params(tt.req)
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

// TestRequestErrorNoNetwork checks that a request refused before sending
// comes out of the stream as its only element.
func TestRequestErrorNoNetwork(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{}, llmtest.Streamed(t, "text.sse"))
	req := llmtest.UserRequest("hi")
	req.Params.HostedTools = []string{"code_interpreter"}
	_, err := llmtest.Drain(t, context.Background(), b.client, req)
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), `hosted tool "code_interpreter" is unknown`) {
		t.Fatalf("err = %v, want ErrBadRequest naming the hosted tool", err)
	}
	if n := len(b.fake.Requests()); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}

// TestToolMessageText checks the text a tool result is sent as.
func TestToolMessageText(t *testing.T) {
	t.Parallel()
	image := []conversation.Block{conversation.ImageBlock("image/png", "iVBORw0KGgo=")}
	tests := []struct {
		content []conversation.Block
		isError bool
		want    string
	}{
		{text("42"), false, "42"},
		{text("boom"), true, "Error: boom"},
		{text("Error: already said"), true, "Error: already said"},
		{image, false, conversation.PlaceholderSuccess},
		{image, true, "Error: " + conversation.PlaceholderFailure},
	}
	for _, tt := range tests {
		msgs, err := messages(&llm.Request{Messages: []conversation.Message{
			{Role: conversation.MessageTool, ToolCallID: "call_1", Content: tt.content, IsError: tt.isError},
		}})
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		var got []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Role != "tool" || got[0].ToolCallID != "call_1" || got[0].Content != tt.want {
			t.Errorf("%v (error %v) sent as %s, want content %q", tt.content, tt.isError, body, tt.want)
		}
	}
}
