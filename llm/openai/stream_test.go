package openai

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

func usagePart(in, out int) llm.Part {
	return llm.Part{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: in, OutputTokens: out}}
}

func finishPart(f llm.FinishReason) llm.Part { return llm.Part{Kind: llm.PartFinish, Finish: f} }

// weather is a fragment of the arguments of the recorded call to
// get_weather (tool_call.sse).
func weather(args string) llm.Part {
	return llmtest.ArgsPart("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", args)
}

func reasoningPart(s string) llm.Part {
	return llm.Part{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{Text: s}}
}

// TestStreams replays recorded streams and checks the parts, in order.
func TestStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply func(t *testing.T) reply
		want  []llm.Part
	}{
		{
			name:  "plain text answer with usage chunk",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "text.sse") },
			want: []llm.Part{
				llmtest.TextPart("Hello"), llmtest.TextPart(", world"), llmtest.TextPart("! How can I help?"),
				usagePart(19, 10), finishPart(llm.FinishStop),
			},
		},
		{
			name:  "one tool call streamed in several argument deltas, each a fragment as it arrives",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "tool_call.sse") },
			want: []llm.Part{
				weather(`{"`), weather("location"), weather(`":"`), weather("Paris"), weather(", France"), weather(`"}`),
				llmtest.CallPart("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", `{"location":"Paris, France"}`),
				usagePart(81, 17), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name:  "two parallel tool calls",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "parallel_tool_calls.sse") },
			want: []llm.Part{
				llmtest.ArgsPart("call_7bMPjyPBqDyDCs9J0OxW1Xla", "get_weather", `{"location": "Pa`),
				llmtest.ArgsPart("call_7bMPjyPBqDyDCs9J0OxW1Xla", "get_weather", `ris"}`),
				llmtest.ArgsPart("call_QdXq4SMRiHVGTtKpzl0dQzCk", "get_time", `{"timezone"`),
				llmtest.ArgsPart("call_QdXq4SMRiHVGTtKpzl0dQzCk", "get_time", `: "Europe/Paris"}`),
				llmtest.CallPart("call_7bMPjyPBqDyDCs9J0OxW1Xla", "get_weather", `{"location": "Paris"}`),
				llmtest.CallPart("call_QdXq4SMRiHVGTtKpzl0dQzCk", "get_time", `{"timezone": "Europe/Paris"}`),
				usagePart(102, 46), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name:  "reasoning_content of a compatible server, usage chunk with null choices",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "reasoning.sse") },
			want: []llm.Part{
				reasoningPart("The user asks for 2+2. That is 4."),
				llmtest.TextPart("2 + 2 = "), llmtest.TextPart("4."),
				usagePart(13, 24), finishPart(llm.FinishStop),
			},
		},
		{
			name:  "unknown fields, events, choices and comments are skipped",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "unknown_fields.sse") },
			want:  []llm.Part{llmtest.TextPart("Still "), llmtest.TextPart("here."), finishPart(llm.FinishStop)},
		},
		{
			name: "reasoning field of Ollama-like servers, ended by a tool call",
			reply: func(*testing.T) reply {
				return chunks(
					`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Need the weather."},"finish_reason":null}]}`,
					`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x1","index":0,"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":null}]}`,
					`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`,
				)
			},
			want: []llm.Part{
				reasoningPart("Need the weather."),
				llmtest.ArgsPart("call_x1", "get_weather", `{"city":"Oslo"}`),
				llmtest.CallPart("call_x1", "get_weather", `{"city":"Oslo"}`),
				finishPart(llm.FinishToolCalls), // "stop" with calls: the calls win
			},
		},
		{
			name: "invalid JSON arguments are passed on exactly as sent",
			reply: func(*testing.T) reply {
				return chunks(
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_bad","type":"function","function":{"name":"respond","arguments":"{\"message\": \"hi"}}]},"finish_reason":null}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
				)
			},
			want: []llm.Part{
				llmtest.ArgsPart("call_bad", "respond", `{"message": "hi`),
				llmtest.CallPart("call_bad", "respond", `{"message": "hi`), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name: "calls all at index 0 with distinct ids, one without arguments or id",
			reply: func(*testing.T) reply {
				return chunks(
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"a","arguments":"{}"}}]},"finish_reason":null}]}`,
					`{"id":"other-id","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"b","arguments":"{\"x\":1}"}}]},"finish_reason":null}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"type":"function","function":{"name":"c"}}]},"finish_reason":"tool_calls"}]}`,
				)
			},
			want: []llm.Part{
				llmtest.ArgsPart("call_a", "a", `{}`), llmtest.ArgsPart("call_b", "b", `{"x":1}`),
				llmtest.CallPart("call_a", "a", `{}`), llmtest.CallPart("call_b", "b", `{"x":1}`), llmtest.CallPart("call_2", "c", `{}`),
				finishPart(llm.FinishToolCalls),
			},
		},
		{
			name: "a call whose id comes after its arguments began keeps the id its fragments went out under",
			reply: func(*testing.T) reply {
				return chunks(
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"name":"respond","arguments":"{\"message\":"}}]},"finish_reason":null}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_late","type":"function","function":{"arguments":"\"Hi\"}"}}]},"finish_reason":"tool_calls"}]}`,
				)
			},
			want: []llm.Part{
				llmtest.ArgsPart("call_0", "respond", `{"message":`), llmtest.ArgsPart("call_0", "respond", `"Hi"}`),
				llmtest.CallPart("call_0", "respond", `{"message":"Hi"}`), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name: "length and refusal",
			reply: func(*testing.T) reply {
				return chunks(
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":null}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
				)
			},
			want: []llm.Part{llmtest.TextPart("I can't help with that."), finishPart(llm.FinishLength)},
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

// TestStreamCollect checks that a streamed answer collects into the response
// the engine reads.
func TestStreamCollect(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{}, llmtest.Streamed(t, "reasoning.sse"))
	resp, err := llm.Collect(b.client.Generate(context.Background(), llmtest.UserRequest("2+2?")))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Response{
		Text:      "2 + 2 = 4.",
		Reasoning: []conversation.Reasoning{{Text: "The user asks for 2+2. That is 4."}},
		Usage:     llm.Usage{InputTokens: 13, OutputTokens: 24},
		Finish:    llm.FinishStop,
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

// TestStreamStop checks that a consumer may stop the stream early.
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
