package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

// TestStreams replays recorded streams and checks the parts, in order.
func TestStreams(t *testing.T) {
	t.Parallel()
	const start = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	stop := func(reason string, out int) []string {
		return []string{
			`{"type":"message_delta","delta":{"stop_reason":"` + reason + `","stop_sequence":null},"usage":{"output_tokens":` + itoa(out) + `}}`,
			`{"type":"message_stop"}`,
		}
	}
	const whole = `{"type":"web_search_result_location","cited_text":"whole","url":"https://example.com/a","title":null,"encrypted_index":"Eo8B"}`
	tests := []struct {
		name  string
		reply func(t *testing.T) reply
		want  []llm.Part
	}{
		{
			name:  "plain text, with a ping",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "text.sse") },
			want: []llm.Part{
				llmtest.TextPart("Hello"), llmtest.TextPart(", world"), llmtest.TextPart("! How can I help?"),
				usagePart(25, 12), finishPart(llm.FinishStop),
			},
		},
		{
			name:  "text, then a tool call whose input arrives in many input_json_delta events, each a fragment as it arrives",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "tool_use.sse") },
			want: []llm.Part{
				llmtest.TextPart("Okay, let me check"), llmtest.TextPart(" the weather for San Francisco, CA:"),
				weather(`{"location":`), weather(` "San`), weather(` Francisc`), weather(`o,`), weather(` CA"`), weather(`, `),
				weather(`"unit": "fah`), weather(`renheit"}`),
				llmtest.CallPart("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", `{"location": "San Francisco, CA", "unit": "fahrenheit"}`),
				usagePart(472, 89), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name:  "thinking with its signature is one reasoning part, sent when the block stops",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "thinking.sse") },
			want: []llm.Part{
				reasoningPart("The user asks for 2+2. That is 4.", signature),
				llmtest.TextPart("2 + 2 = "), llmtest.TextPart("4."),
				usagePart(42, 58), finishPart(llm.FinishStop),
			},
		},
		{
			name:  "server tools other than web search, their results, document citations and unknown kinds are skipped",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "unknown_blocks.sse") },
			want:  []llm.Part{llmtest.TextPart("Still "), llmtest.TextPart("here."), usagePart(2679, 510), finishPart(llm.FinishStop)},
		},
		{
			name:  "a web search is hosted activity, started then completed; cited text's citations follow it, anchored to its block",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "web_search.sse") },
			want:  webSearchParts(t),
		},
		{
			name:  "a web search error result is a failed activity named by its error code",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "web_search_error.sse") },
			want: func() []llm.Part {
				const id = "srvtoolu_01Ab9XqLm3kT7pWz2vR8sNcE"
				result := recorded(t, "web_search_error.sse", "content_block_start", "content_block")[1]
				return []llm.Part{
					hostedPart(conversation.HostedActivity{
						ActivityID: id, Name: "web_search", State: conversation.ActivityStarted, Input: json.RawMessage(`{"query": "euro exchange rate"}`),
						Payload: usePayload(`{"id":"` + id + `","input":{"query":"euro exchange rate"},"name":"web_search","type":"server_tool_use"}`),
					}),
					hostedPart(conversation.HostedActivity{ActivityID: id, Name: "web_search", State: conversation.ActivityFailed, Summary: "max_uses_exceeded", Payload: searchPayload(result)}),
					llmtest.TextPart("I could not search the web just now."),
					usagePart(2098, 41), finishPart(llm.FinishStop),
				}
			}(),
		},
		{
			name:  "redacted thinking is reasoning whose payload is its data; thinking beside it keeps its signature",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "redacted_thinking.sse") },
			want: []llm.Part{
				{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{Payload: redactedPayload(
					"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8URpq+z+",
				)}},
				reasoningPart("Answer plainly.", "EqQBCgIYAhIMsig2"),
				llmtest.TextPart("Here is a plain answer."),
				usagePart(96, 212), finishPart(llm.FinishStop),
			},
		},
		{
			name: "citations sent whole in content_block_start anchor to their block's text, after earlier text",
			reply: func(*testing.T) reply {
				return events(append([]string{start,
					`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Intro. "}}`,
					`{"type":"content_block_stop","index":0}`,
					`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Cited – whole.","citations":[` + whole + `,{"type":"char_location","cited_text":"x","document_index":0,"start_char_index":0,"end_char_index":1}]}}`,
					`{"type":"content_block_stop","index":1}`,
				}, stop("end_turn", 9)...)...)
			},
			want: []llm.Part{
				llmtest.TextPart("Intro. "), llmtest.TextPart("Cited – whole."),
				citationPart(conversation.Citation{
					Source: conversation.Source{URL: "https://example.com/a"}, Excerpt: "whole",
					Range: &conversation.Range{Start: 7, End: 7 + len("Cited – whole.")}, Replay: citationPayload(whole),
				}),
				usagePart(10, 9), finishPart(llm.FinishStop),
			},
		},
		{
			name: "a cited block whose stop was lost still delivers its citations when the message ends",
			reply: func(*testing.T) reply {
				return events(append([]string{start,
					`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
					`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":` + whole + `}}`,
					`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Unstopped."}}`,
				}, stop("end_turn", 4)...)...)
			},
			want: []llm.Part{
				llmtest.TextPart("Unstopped."),
				citationPart(conversation.Citation{
					Source: conversation.Source{URL: "https://example.com/a"}, Excerpt: "whole",
					Range: &conversation.Range{Start: 0, End: len("Unstopped.")}, Replay: citationPayload(whole),
				}),
				usagePart(10, 4), finishPart(llm.FinishStop),
			},
		},
		{
			name: "message_start's search count stays when message_delta has none",
			reply: func(*testing.T) reply {
				return events(
					`{"type":"message_start","message":{"id":"msg_3","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":30,"output_tokens":1,"server_tool_use":{"web_search_requests":2}}}}`,
					`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Searching more."}}`,
					`{"type":"content_block_stop","index":0}`,
					`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`,
					`{"type":"message_stop"}`,
				)
			},
			want: []llm.Part{
				llmtest.TextPart("Searching more."),
				{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: 30, OutputTokens: 5, Hosted: map[string]int{"web_search": 2}}},
				finishPart(llm.FinishStop),
			},
		},
		{
			name: "a search query that is not JSON is kept as a JSON string, without a payload; one sent whole in content_block_start is kept as is",
			reply: func(*testing.T) reply {
				return events(append([]string{start,
					`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_a","name":"web_search","input":{}}}`,
					`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"unterminated"}}`,
					`{"type":"content_block_stop","index":0}`,
					`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_b","name":"web_search","input":{"query":"whole"}}}`,
					`{"type":"content_block_stop","index":1}`,
				}, stop("end_turn", 3)...)...)
			},
			want: []llm.Part{
				hostedPart(conversation.HostedActivity{ActivityID: "srvtoolu_a", Name: "web_search", State: conversation.ActivityStarted, Input: json.RawMessage(`"{\"query\": \"unterminated"`)}),
				hostedPart(conversation.HostedActivity{
					ActivityID: "srvtoolu_b", Name: "web_search", State: conversation.ActivityStarted, Input: json.RawMessage(`{"query":"whole"}`),
					Payload: usePayload(`{"id":"srvtoolu_b","input":{"query":"whole"},"name":"web_search","type":"server_tool_use"}`),
				}),
				usagePart(10, 3), finishPart(llm.FinishStop),
			},
		},
		{
			name: "invalid JSON input is passed on exactly as sent; a call without deltas gets {}",
			reply: func(*testing.T) reply {
				return events(append([]string{start,
					`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_bad","name":"respond","input":{}}}`,
					`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"message\": \"hi"}}`,
					`{"type":"content_block_stop","index":0}`,
					`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_none","name":"list","input":{}}}`,
					`{"type":"content_block_stop","index":1}`,
				}, stop("tool_use", 20)...)...)
			},
			want: []llm.Part{
				llmtest.ArgsPart("toolu_bad", "respond", `{"message": "hi`),
				llmtest.CallPart("toolu_bad", "respond", `{"message": "hi`), llmtest.CallPart("toolu_none", "list", `{}`),
				usagePart(10, 20), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name: "redacted thinking is reasoning; max_tokens is length",
			reply: func(*testing.T) reply {
				return events(append([]string{start,
					`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}}`,
					`{"type":"content_block_stop","index":0}`,
					`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Trunc"}}`,
					`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ated"}}`,
					`{"type":"content_block_stop","index":1}`,
				}, stop("max_tokens", 4096)...)...)
			},
			want: []llm.Part{
				{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{Payload: redactedPayload("EmwKAhgBEgy3va3pzix/LafPsn4a")}},
				llmtest.TextPart("Trunc"), llmtest.TextPart("ated"), usagePart(10, 4096), finishPart(llm.FinishLength),
			},
		},
		{
			name: "cached prompt tokens count as input; message_delta's counts replace message_start's",
			reply: func(*testing.T) reply {
				return events(
					`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":1}}}`,
					`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
					`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi."}}`,
					`{"type":"content_block_stop","index":0}`,
					`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"},"usage":{"input_tokens":6,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":3}}`,
					`{"type":"message_stop"}`,
				)
			},
			want: []llm.Part{llmtest.TextPart("Hi."), usagePart(2106, 3), finishPart(llm.FinishStop)},
		},
		{
			name: "refusal is content_filter; a text delta without its block start is kept",
			reply: func(*testing.T) reply {
				return events(append([]string{start,
					`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I can't help with that."}}`,
				}, stop("refusal", 7)...)...)
			},
			want: []llm.Part{llmtest.TextPart("I can't help with that."), usagePart(10, 7), finishPart(llm.FinishFiltered)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{}, tt.reply(t))
			got, err := llmtest.Drain(t, context.Background(), b.client, llmtest.UserRequest("hi"))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			llmtest.CheckToolArgs(t, got, 0)
			if n := len(b.fake.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// TestStreamStop checks that a consumer that stops early ends the call.
func TestStreamStop(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{}, llmtest.Streamed(t, "text.sse"))
	var got []llm.Part
	for p, err := range b.client.Generate(context.Background(), llmtest.UserRequest("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
		break
	}
	if diff := cmp.Diff([]llm.Part{llmtest.TextPart("Hello")}, got); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
}

// weather is a fragment of the input of the recorded call to get_weather
// (tool_use.sse).
func weather(args string) llm.Part {
	return llmtest.ArgsPart("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", args)
}

func itoa(n int) string {
	return strconv.Itoa(n)
}

// TestStreamCutCitations checks that a stream cut inside a cited text block,
// after its text went out, delivers the block's citations anchored to the
// text sent, before the error; llm.Collect marks them incomplete.
func TestStreamCutCitations(t *testing.T) {
	t.Parallel()
	const cite = `{"type":"web_search_result_location","cited_text":"half","url":"https://example.com/h","title":"H","encrypted_index":"Eo8C"}`
	r := events(
		`{"type":"message_start","message":{"id":"msg_4","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":10,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Before. "}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"","citations":[]}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":`+cite+`}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Half an ans"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"wer that never ends"}}`,
	)
	r.CutAfter = strings.LastIndex(r.Body, "event: ") + 20 // inside the last event
	b := setup(t, Config{}, r)
	got, err := llm.Collect(b.client.Generate(context.Background(), llmtest.UserRequest("hi")))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	want := llm.Response{
		Text: "Before. Half an ans",
		Citations: []conversation.Citation{{
			Source: conversation.Source{URL: "https://example.com/h", Title: "H"}, Excerpt: "half",
			Range: &conversation.Range{Start: len("Before. "), End: len("Before. Half an ans")}, Replay: citationPayload(cite),
			Incomplete: true,
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if n := len(b.fake.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (part of the answer went out)", n)
	}
}
