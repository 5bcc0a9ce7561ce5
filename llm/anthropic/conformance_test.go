package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/provider"
)

// signature is the signature of testdata/thinking.sse.
const signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds2FnoHKxs1hS2hgEnJ8dS5Gn7z3bLd1QEVQ7uBO3hZf6ri3y9K7Rt9xw4bU1="

// TestConformance runs the table every llm.Model adapter must pass.
func TestConformance(t *testing.T) {
	t.Parallel()
	text := llmtest.Recording(t, "text.sse")
	// message_start and the text block's start: no part yet.
	second := strings.Index(text, "event: content_block_start")
	cutBody := text[:second+60]

	call := func(id, name, args string) conversation.ToolCall {
		return conversation.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
	}
	wire := llmtest.Wire{
		Path: "/v1/messages",
		Streams: map[llmtest.Case]llmtest.Stream{
			llmtest.CaseText: {Body: text, Want: llm.Response{
				Text: "Hello, world! How can I help?", Usage: llm.Usage{InputTokens: 25, OutputTokens: 12}, Finish: llm.FinishStop,
			}},
			llmtest.CaseToolCall: {Body: llmtest.Recording(t, "tool_use.sse"), Want: llm.Response{
				Text:      "Okay, let me check the weather for San Francisco, CA:",
				ToolCalls: []conversation.ToolCall{call("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", `{"location": "San Francisco, CA", "unit": "fahrenheit"}`)},
				Usage:     llm.Usage{InputTokens: 472, OutputTokens: 89}, Finish: llm.FinishToolCalls,
			}},
			llmtest.CaseTwoToolCalls: {Body: llmtest.Recording(t, "two_tool_uses.sse"), Want: llm.Response{
				ToolCalls: []conversation.ToolCall{
					call("toolu_01A09q90qw90lq917835lq9", "get_weather", `{"location": "Paris"}`),
					call("toolu_01B8Rr2m4hLk7dQpZs3xYv1N", "get_time", `{"timezone": "Europe/Paris"}`),
				},
				Usage: llm.Usage{InputTokens: 610, OutputTokens: 104}, Finish: llm.FinishToolCalls,
			}},
			llmtest.CaseReasoning: {Body: llmtest.Recording(t, "thinking.sse"), Want: llm.Response{
				Text:      "2 + 2 = 4.",
				Reasoning: []conversation.Reasoning{{Text: "The user asks for 2+2. That is 4.", Signature: signature}},
				Usage:     llm.Usage{InputTokens: 42, OutputTokens: 58}, Finish: llm.FinishStop,
			}},
			llmtest.CaseUnknownBlock: {Body: llmtest.Recording(t, "unknown_blocks.sse"), Want: llm.Response{
				Text: "Still here.", Usage: llm.Usage{InputTokens: 2679, OutputTokens: 510}, Finish: llm.FinishStop,
			}},
			llmtest.CaseWebSearch: {Body: llmtest.Recording(t, "web_search.sse"), Want: collected(t, webSearchParts(t))},
			llmtest.CasePaused: {
				Body: llmtest.Recording(t, pausedFile(1)), Then: []string{llmtest.Recording(t, pausedFile(2)), llmtest.Recording(t, pausedFile(3))},
				Want: collected(t, pausedParts(t)),
			},
			llmtest.CaseMalformed: {Body: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":\n\n"},
			llmtest.CaseCut:       {Body: cutBody},
		},
		ErrorBody: func(status int, message string) string {
			typ := map[int]string{401: "authentication_error", 429: "rate_limit_error", 500: "api_error"}[status]
			return apiError(typ, message)
		},
		Sentinels:       llmtest.Sentinels{Auth: ErrAuth, RateLimited: ErrRateLimited, Unavailable: ErrUnavailable},
		StreamsToolArgs: true,
		Provider:        "anthropic",
		Replay:          llmtest.Stream{Body: text},
	}
	llmtest.Conformance(t, func(t *testing.T, srv llmtest.Server) llm.Model {
		c, err := New(Config{
			APIKey:  srv.APIKey,
			BaseURL: srv.URL,
			Model:   "claude-test",
			Options: provider.Options{MaxAttempts: srv.MaxAttempts, HTTPClient: srv.Client, Sleep: srv.Sleep},
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, wire)
}
