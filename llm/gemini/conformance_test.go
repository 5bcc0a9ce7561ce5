package gemini

import (
	"encoding/json"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/provider"
)

// The thought signatures of the recorded streams.
const (
	sigCall     = "CiQBcsjafKhdTWgSJ6gpCf0tIFzFYTyA2kQ8mlCvsAoJJNHmUAsKYgFyyNp8sRvmVG5Lw47v/EY5a8c3Q4Ybp3qK9ltE1C7OIBM3+pT5L9MoGAU3FvZ1gEJ6nK7EmXqZ3gR1hQ=="
	sigTwoCalls = "CikBcsjafAbVz3uAVZ4bYqDPH7cVXwoP3mH0fDN7vLUWx2qg3LZ3cW5+ZRJlAXLI2nw="
	sigThought  = "CmQBcsjafNVB8Fc5bcdhY5T3sBd0w9JmKqQh7Wk3o8J2D3bPq2lV1uR4pE0aYyT8nGf6Xs1oL2cK9iH4eD7bA5zU3xW1vQ0tS8rP6oN4mL2kJ0iH8gF6eD4cB2aZ0yU="
)

// searchText is the answer of testdata/web_search.sse; its en dash is three
// bytes, so byte and rune offsets differ after it.
const searchText = "Spain won Euro 2024, beating England 2–1 in the final. Mikel Oyarzabal scored the winner in the 86th minute."

// redirect starts the grounding URLs of testdata/web_search.sse.
const redirect = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"

// webSearchWant is what testdata/web_search.sse collects to.
func webSearchWant() llm.Response {
	input := json.RawMessage(`["euro 2024 final result","who scored euro 2024 final winner"]`)
	id := "search_B0NmaYSPEZyDnsEP_pWqsQo"
	uefa := conversation.Source{URL: redirect + "AUZIYQGq1m7hF0QW3Yz", Title: "uefa.com"}
	wiki := conversation.Source{URL: redirect + "AUZIYQHx9cT2bVv8LpA", Title: "wikipedia.org"}
	espn := conversation.Source{URL: redirect + "AUZIYQEk4rS6nJm1QdW", Title: "espn.com"}
	first := &conversation.Range{Start: 0, End: 56}
	second := &conversation.Range{Start: 57, End: 110}
	return llm.Response{
		Text: searchText,
		Hosted: []conversation.HostedActivity{
			{ActivityID: id, Name: "web_search", State: conversation.ActivityStarted, Input: input, TextAt: len(searchText)},
			{ActivityID: id, Name: "web_search", State: conversation.ActivityCompleted, Input: input, Summary: "2 queries, 3 sources", TextAt: len(searchText)},
		},
		Citations: []conversation.Citation{
			{Source: uefa, Range: first},
			{Source: wiki, Range: first},
			{Source: wiki, Range: second},
			{Source: espn},
		},
		Usage:  llm.Usage{InputTokens: 21 + 310, OutputTokens: 30 + 96, Hosted: map[string]int{"web_search": 2}},
		Finish: llm.FinishStop,
	}
}

func toolCall(id, name, args, sig string) conversation.ToolCall {
	return *callPart(id, name, args, sig).ToolCall
}

// TestConformance runs the table every llm.Model adapter must pass.
func TestConformance(t *testing.T) {
	t.Parallel()
	text := llmtest.Recording(t, "text.sse")
	wire := llmtest.Wire{
		Path: streamPath,
		Streams: map[llmtest.Case]llmtest.Stream{
			llmtest.CaseText: {Body: text, Want: llm.Response{
				Text: "Hello, world! How can I help?", Usage: llm.Usage{InputTokens: 9, OutputTokens: 21}, Finish: llm.FinishStop,
			}},
			llmtest.CaseToolCall: {Body: llmtest.Recording(t, "function_call.sse"), Want: llm.Response{
				Text:      "I'll check the weather in Paris for you.",
				ToolCalls: []conversation.ToolCall{toolCall("call_aUJmaZ2qBMfUjMcP1b2Y2Qk_0", "get_weather", `{"days":3,"location":"Paris, France","unit":"celsius"}`, sigCall)},
				Usage:     llm.Usage{InputTokens: 112, OutputTokens: 79}, Finish: llm.FinishToolCalls,
			}},
			llmtest.CaseTwoToolCalls: {Body: llmtest.Recording(t, "two_function_calls.sse"), Want: llm.Response{
				ToolCalls: []conversation.ToolCall{
					toolCall("call_pEJmaY3VG5G1nsEPzsTgmQ4_0", "get_weather", `{"location":"Paris"}`, sigTwoCalls),
					toolCall("call_pEJmaY3VG5G1nsEPzsTgmQ4_1", "get_time", `{"timezone":"Europe/Paris"}`, ""),
				},
				Usage: llm.Usage{InputTokens: 140, OutputTokens: 54}, Finish: llm.FinishToolCalls,
			}},
			llmtest.CaseReasoning: {Body: llmtest.Recording(t, "thinking.sse"), Want: llm.Response{
				Text:      "2 + 2 = 4.",
				Reasoning: []conversation.Reasoning{*reasoningPart("**Adding two numbers**\n\nThe user asks for 2+2. That is 4.", sigThought).Reasoning},
				Usage:     llm.Usage{InputTokens: 11, OutputTokens: 48}, Finish: llm.FinishStop,
			}},
			llmtest.CaseUnknownBlock: {Body: llmtest.Recording(t, "unknown_parts.sse"), Want: llm.Response{
				Text: "Still here.", Usage: llm.Usage{InputTokens: 30, OutputTokens: 27}, Finish: llm.FinishStop,
			}},
			llmtest.CaseWebSearch: {Body: llmtest.Recording(t, "web_search.sse"), Want: webSearchWant()},
			llmtest.CaseMalformed: {Body: "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \r\n\r\n"},
			// The first chunk, cut before its text is whole: no part yet.
			llmtest.CaseCut: {Body: text[:60]},
		},
		ErrorBody: func(status int, message string) string {
			return apiError(status, statusOf(status), message, "")
		},
		Sentinels: llmtest.Sentinels{Auth: ErrAuth, RateLimited: ErrRateLimited, Unavailable: ErrUnavailable},
		// StreamsToolArgs is left false: Gemini sends function calls whole.
		Provider: "gemini",
		// Every payload is a thought signature, sent back; a search has
		// none (its grounding metadata has no way back: see doc.go).
		Replay: llmtest.Stream{Body: text},
	}
	llmtest.Conformance(t, func(t *testing.T, srv llmtest.Server) llm.Model {
		c, err := New(Config{
			APIKey:  srv.APIKey,
			BaseURL: srv.URL,
			Model:   testModel,
			Options: provider.Options{MaxAttempts: srv.MaxAttempts, HTTPClient: srv.Client, Sleep: srv.Sleep},
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, wire)
}
