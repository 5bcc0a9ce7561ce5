package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/provider"
)

// TestConformance runs the table every llm.Model adapter must pass.
func TestConformance(t *testing.T) {
	t.Parallel()
	read := func(name string) string { return llmtest.Recording(t, name) }
	text := read("text.sse")
	// The first chunk (the role alone) and half of the second.
	first := strings.Index(text, "\n\n") + 2
	cutBody := text[:first+40]

	call := func(id, name, args string) conversation.ToolCall {
		return conversation.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
	}
	wire := llmtest.Wire{
		Path: "/v1/chat/completions",
		Streams: map[llmtest.Case]llmtest.Stream{
			llmtest.CaseText: {Body: text, Want: llm.Response{
				Text: "Hello, world! How can I help?", Usage: llm.Usage{InputTokens: 19, OutputTokens: 10}, Finish: llm.FinishStop,
			}},
			llmtest.CaseToolCall: {Body: read("tool_call.sse"), Want: llm.Response{
				ToolCalls: []conversation.ToolCall{call("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", `{"location":"Paris, France"}`)},
				Usage:     llm.Usage{InputTokens: 81, OutputTokens: 17}, Finish: llm.FinishToolCalls,
			}},
			llmtest.CaseTwoToolCalls: {Body: read("parallel_tool_calls.sse"), Want: llm.Response{
				ToolCalls: []conversation.ToolCall{
					call("call_7bMPjyPBqDyDCs9J0OxW1Xla", "get_weather", `{"location": "Paris"}`),
					call("call_QdXq4SMRiHVGTtKpzl0dQzCk", "get_time", `{"timezone": "Europe/Paris"}`),
				},
				Usage: llm.Usage{InputTokens: 102, OutputTokens: 46}, Finish: llm.FinishToolCalls,
			}},
			llmtest.CaseReasoning: {Body: read("reasoning.sse"), Want: llm.Response{
				Text:      "2 + 2 = 4.",
				Reasoning: []conversation.Reasoning{{Text: "The user asks for 2+2. That is 4."}},
				Usage:     llm.Usage{InputTokens: 13, OutputTokens: 24}, Finish: llm.FinishStop,
			}},
			llmtest.CaseUnknownBlock: {Body: read("unknown_fields.sse"), Want: llm.Response{
				Text: "Still here.", Finish: llm.FinishStop,
			}},
			// The search of a reasoning model: its payloads (reasoning, the
			// search, the citation) are what the replay cases send back.
			llmtest.CaseWebSearch: {Path: "/v1/responses", Body: read(reasoningSearch), Want: reasoningSearchAnswer(t)},
			llmtest.CaseMalformed: {Body: "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\n\ndata: [DONE]\n\n"},
			llmtest.CaseCut:       {Body: cutBody},
		},
		ErrorBody: func(status int, message string) string {
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "error", "code": nil}})
			return string(b)
		},
		Sentinels:       llmtest.Sentinels{Auth: ErrAuth, RateLimited: ErrRateLimited, Unavailable: ErrUnavailable},
		StreamsToolArgs: true,
		Provider:        "openai",
		// Requests with the hosted search go to the Responses API, which
		// takes every payload back (Chat Completions takes none: see doc.go).
		Replay: llmtest.Stream{Path: "/v1/responses", Body: read("responses_text.sse")},
	}
	llmtest.Conformance(t, func(t *testing.T, srv llmtest.Server) llm.Model {
		c, err := New(Config{
			APIKey:  srv.APIKey,
			BaseURL: srv.URL + "/v1",
			Model:   "gpt-test",
			Options: provider.Options{MaxAttempts: srv.MaxAttempts, HTTPClient: srv.Client, Sleep: srv.Sleep},
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, wire)
}
