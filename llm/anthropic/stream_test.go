package anthropic

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/llm"
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
	tests := []struct {
		name  string
		reply func(t *testing.T) reply
		want  []llm.Part
	}{
		{
			name:  "plain text, with a ping",
			reply: func(t *testing.T) reply { return sse(t, "text.sse") },
			want: []llm.Part{
				textPart("Hello"), textPart(", world"), textPart("! How can I help?"),
				usagePart(25, 12), finishPart(llm.FinishStop),
			},
		},
		{
			name:  "text, then a tool call whose input arrives in many input_json_delta events",
			reply: func(t *testing.T) reply { return sse(t, "tool_use.sse") },
			want: []llm.Part{
				textPart("Okay, let me check"), textPart(" the weather for San Francisco, CA:"),
				callPart("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", `{"location": "San Francisco, CA", "unit": "fahrenheit"}`),
				usagePart(472, 89), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name:  "thinking with its signature is one reasoning part, sent when the block stops",
			reply: func(t *testing.T) reply { return sse(t, "thinking.sse") },
			want: []llm.Part{
				reasoningPart("The user asks for 2+2. That is 4.", signature),
				textPart("2 + 2 = "), textPart("4."),
				usagePart(42, 58), finishPart(llm.FinishStop),
			},
		},
		{
			name:  "server tool use, web search results, citations and unknown kinds are skipped",
			reply: func(t *testing.T) reply { return sse(t, "unknown_blocks.sse") },
			want:  []llm.Part{textPart("Still "), textPart("here."), usagePart(2679, 510), finishPart(llm.FinishStop)},
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
				callPart("toolu_bad", "respond", `{"message": "hi`), callPart("toolu_none", "list", `{}`),
				usagePart(10, 20), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name: "redacted thinking is skipped; max_tokens is length",
			reply: func(*testing.T) reply {
				return events(append([]string{start,
					`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}}`,
					`{"type":"content_block_stop","index":0}`,
					`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Trunc"}}`,
					`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ated"}}`,
					`{"type":"content_block_stop","index":1}`,
				}, stop("max_tokens", 4096)...)...)
			},
			want: []llm.Part{textPart("Trunc"), textPart("ated"), usagePart(10, 4096), finishPart(llm.FinishLength)},
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
			want: []llm.Part{textPart("Hi."), usagePart(2106, 3), finishPart(llm.FinishStop)},
		},
		{
			name: "refusal is content_filter; a text delta without its block start is kept",
			reply: func(*testing.T) reply {
				return events(append([]string{start,
					`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I can't help with that."}}`,
				}, stop("refusal", 7)...)...)
			},
			want: []llm.Part{textPart("I can't help with that."), usagePart(10, 7), finishPart(llm.FinishFiltered)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{}, tt.reply(t))
			got, err := drain(t, context.Background(), b.client, userRequest("hi"))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			if n := len(b.fake.requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// TestStreamStop checks that a consumer that stops early ends the call.
func TestStreamStop(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{}, sse(t, "text.sse"))
	var got []llm.Part
	for p, err := range b.client.Generate(context.Background(), userRequest("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
		break
	}
	if diff := cmp.Diff([]llm.Part{textPart("Hello")}, got); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
}

func itoa(n int) string {
	return strconv.Itoa(n)
}
