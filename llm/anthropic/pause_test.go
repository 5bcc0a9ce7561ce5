package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

// TestPause checks how an answer the API paused (pause_turn) is continued:
// each continuation is the same request with the blocks received so far,
// as received, as its last (assistant) message; the responses stream as
// one answer; a continuation that fails before any of its parts is
// retried; past the bound, or with tool calls, the answer ends.
func TestPause(t *testing.T) {
	t.Parallel()
	b1 := recorded(t, pausedFile(1), "content_block_start", "content_block")
	b2 := recorded(t, pausedFile(2), "content_block_start", "content_block")
	cite := func(n int) string { return recorded(t, pausedFile(n), "content_block_delta", "delta", "citation")[0] }
	// The blocks of the first response and of the second, as received.
	first := []string{
		`{"type":"thinking","thinking":"Two searches: today, then tomorrow.","signature":"EqQBCgIYAhIMpause1sigZA2b3hGgx"}`,
		`{"type":"text","text":"I'll compare two sources. "}`,
		useBlock(searchToday, "Lyon weather today"),
		b1[3],
		`{"type":"text","text":"Lyon is cloudy at 12°C today","citations":[` + cite(1) + `]}`,
		useBlock(searchTomorrow, "Lyon forecast tomorrow"),
	}
	second := []string{
		b2[0],
		`{"type":"text","text":"; rain is expected tomorrow","citations":[` + cite(2) + `]}`,
		useBlock(searchWeekend, "Lyon weather weekend"),
		b2[3],
	}
	paused := events(
		`{"type":"message_start","message":{"id":"msg_p","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":10,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Searching."}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"pause_turn","stop_sequence":null},"usage":{"output_tokens":4}}`,
		`{"type":"message_stop"}`,
	)
	const searching = `{"type":"text","text":"Searching."}`
	tests := []struct {
		name    string
		prefill string // the assistant's words the request ends with
		replies []reply
		want    []llm.Part
		// sent are the assistant blocks each request ends with, by request;
		// a request not listed ends with the user's message.
		sent map[int][]string
	}{
		{
			name:    "continued twice, then ended: one answer, each continuation with every block so far",
			replies: []reply{llmtest.Streamed(t, pausedFile(1)), llmtest.Streamed(t, pausedFile(2)), llmtest.Streamed(t, pausedFile(3))},
			want:    pausedParts(t),
			sent:    map[int][]string{1: first, 2: append(first[:len(first):len(first)], second...)},
		},
		{
			name: "a continuation that fails before its parts is retried as it was",
			replies: []reply{
				llmtest.Streamed(t, pausedFile(1)),
				errorReply(statusOverloaded, "overloaded_error", "Overloaded", nil),
				llmtest.Streamed(t, pausedFile(2)), llmtest.Streamed(t, pausedFile(3)),
			},
			want: pausedParts(t),
			sent: map[int][]string{1: first, 2: first, 3: append(first[:len(first):len(first)], second...)},
		},
		{
			name: "past the bound the answer ends as one a bound cut: length",
			replies: func() []reply {
				var out []reply
				for range 1 + maxContinuations {
					out = append(out, paused)
				}
				return out
			}(),
			want: func() []llm.Part {
				var out []llm.Part
				for range 1 + maxContinuations {
					out = append(out, llmtest.TextPart("Searching."), usagePart(10, 4))
				}
				return append(out, finishPart(llm.FinishLength))
			}(),
			sent: func() map[int][]string {
				sent := map[int][]string{}
				for n := 1; n <= maxContinuations; n++ {
					for range n {
						sent[n] = append(sent[n], searching)
					}
				}
				return sent
			}(),
		},
		{
			name: "a request that ends with the assistant's words: the blocks join them", prefill: "Answer:",
			replies: []reply{paused, llmtest.Streamed(t, "text.sse")},
			want: []llm.Part{
				llmtest.TextPart("Searching."), usagePart(10, 4),
				llmtest.TextPart("Hello"), llmtest.TextPart(", world"), llmtest.TextPart("! How can I help?"), usagePart(25, 12), finishPart(llm.FinishStop),
			},
			sent: map[int][]string{0: {`{"type":"text","text":"Answer:"}`}, 1: {`{"type":"text","text":"Answer:"}`, searching}},
		},
		{
			name: "a paused response with tool calls ends the answer for them",
			replies: []reply{events(
				`{"type":"message_start","message":{"id":"msg_t","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":10,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"lookup","input":{}}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"pause_turn","stop_sequence":null},"usage":{"output_tokens":6}}`,
				`{"type":"message_stop"}`,
			)},
			want: []llm.Part{llmtest.CallPart("toolu_1", "lookup", `{}`), usagePart(10, 6), finishPart(llm.FinishToolCalls)},
		},
		{
			name: "a continuation streams the input of its tool calls, under their ids, before them",
			replies: []reply{paused, events(
				`{"type":"message_start","message":{"id":"msg_c","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":10,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_2","name":"lookup","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"q\":"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Lyon\"}"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":6}}`,
				`{"type":"message_stop"}`,
			)},
			want: []llm.Part{
				llmtest.TextPart("Searching."), usagePart(10, 4),
				llmtest.ArgsPart("toolu_2", "lookup", `{"q":`), llmtest.ArgsPart("toolu_2", "lookup", `"Lyon"}`),
				llmtest.CallPart("toolu_2", "lookup", `{"q":"Lyon"}`), usagePart(10, 6), finishPart(llm.FinishToolCalls),
			},
			sent: map[int][]string{1: {searching}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{}, tt.replies...)
			req := llmtest.UserRequest("Lyon's weather?")
			if tt.prefill != "" {
				req.Messages = append(req.Messages, text(conversation.MessageAssistant, tt.prefill))
			}
			got, err := llmtest.Drain(t, context.Background(), b.client, req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			reqs := b.fake.Requests()
			if len(reqs) != len(tt.replies) {
				t.Fatalf("%d requests, want %d", len(reqs), len(tt.replies))
			}
			for i, r := range reqs {
				var body struct {
					Messages []struct {
						Role    string          `json:"role"`
						Content json.RawMessage `json:"content"`
					} `json:"messages"`
				}
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatal(err)
				}
				want := []string{"user"}
				if tt.sent[i] != nil {
					want = append(want, "assistant")
				}
				var roles []string
				for _, m := range body.Messages {
					roles = append(roles, m.Role)
				}
				if diff := cmp.Diff(want, roles); diff != "" {
					t.Errorf("request %d: roles (-want +got):\n%s", i, diff)
					continue
				}
				if tt.sent[i] != nil {
					if diff := cmp.Diff(jsonList(t, tt.sent[i]), jsonArray(t, body.Messages[1].Content)); diff != "" {
						t.Errorf("request %d: the blocks so far (-want +got):\n%s", i, diff)
					}
				}
			}
		})
	}
}

// TestPauseCollected checks the paused answer as the engine keeps it: the
// whole text, each search placed in it, the citations' ranges on their
// text, the usage of every response summed.
func TestPauseCollected(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{}, llmtest.Streamed(t, pausedFile(1)), llmtest.Streamed(t, pausedFile(2)), llmtest.Streamed(t, pausedFile(3)))
	got, err := llm.Collect(b.client.Generate(context.Background(), llmtest.UserRequest("Lyon's weather?")))
	if err != nil {
		t.Fatal(err)
	}
	const text = "I'll compare two sources. Lyon is cloudy at 12°C today; rain is expected tomorrow, and the weekend looks dry."
	if got.Text != text {
		t.Errorf("text %q, want %q", got.Text, text)
	}
	wantUsage := llm.Usage{InputTokens: 2203 + 2487 + 2701, OutputTokens: 96 + 88 + 35, Hosted: map[string]int{"web_search": 3}}
	if diff := cmp.Diff(wantUsage, got.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	// Each search's two states sit where it came: after the introduction,
	// after today's weather, after tomorrow's.
	const intro, today, tomorrow = len("I'll compare two sources. "), len("Lyon is cloudy at 12°C today"), len("; rain is expected tomorrow")
	var at []int
	for _, h := range got.Hosted {
		at = append(at, h.TextAt)
	}
	if diff := cmp.Diff([]int{intro, intro, intro + today, intro + today, intro + today + tomorrow, intro + today + tomorrow}, at); diff != "" {
		t.Errorf("searches' places in the text (-want +got):\n%s", diff)
	}
	var cited []string
	for _, c := range got.Citations {
		cited = append(cited, text[c.Range.Start:c.Range.End])
	}
	if diff := cmp.Diff([]string{"Lyon is cloudy at 12°C today", "; rain is expected tomorrow", ", and the weekend looks dry"}, cited); diff != "" {
		t.Errorf("cited text (-want +got):\n%s", diff)
	}
	if got.Finish != llm.FinishStop {
		t.Errorf("finish %q, want stop", got.Finish)
	}
}
