package gemini

import (
	"context"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

// TestStreams replays recorded streams and checks the parts, in order.
func TestStreams(t *testing.T) {
	t.Parallel()
	ws := webSearchWant()
	hostedParts := func() []llm.Part {
		var out []llm.Part
		for _, h := range ws.Hosted {
			h.TextAt = 0 // llm.Collect places it; a part does not
			out = append(out, llm.Part{Kind: llm.PartHosted, Hosted: &h})
		}
		for i := range ws.Citations {
			out = append(out, llm.Part{Kind: llm.PartCitation, Citation: &ws.Citations[i]})
		}
		return out
	}
	tests := []struct {
		name  string
		reply func(t *testing.T) reply
		want  []llm.Part
	}{
		{
			name:  "plain text; usage counts thoughts as output",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "text.sse") },
			want: []llm.Part{
				llmtest.TextPart("Hello"), llmtest.TextPart(", world! How can"), llmtest.TextPart(" I help?"),
				usagePart(9, 21), finishPart(llm.FinishStop),
			},
		},
		{
			name:  "text, then a whole function call with its signature, sent at the end",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "function_call.sse") },
			want: []llm.Part{
				llmtest.TextPart("I'll check the weather"), llmtest.TextPart(" in Paris for you."),
				callPart("call_aUJmaZ2qBMfUjMcP1b2Y2Qk_0", "get_weather", `{"days":3,"location":"Paris, France","unit":"celsius"}`, sigCall),
				usagePart(112, 79), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name:  "thought parts are one reasoning part, closed by their signature, before the text",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "thinking.sse") },
			want: []llm.Part{
				reasoningPart("**Adding two numbers**\n\nThe user asks for 2+2. That is 4.", sigThought),
				llmtest.TextPart("2 + 2 = "), llmtest.TextPart("4."),
				usagePart(11, 48), finishPart(llm.FinishStop),
			},
		},
		{
			name:  "code, inline data and unknown part kinds are skipped",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "unknown_parts.sse") },
			want:  []llm.Part{llmtest.TextPart("Still "), llmtest.TextPart("here."), usagePart(30, 27), finishPart(llm.FinishStop)},
		},
		{
			name:  "grounding: search activity, citations with byte ranges, searches counted",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "web_search.sse") },
			want: append(append([]llm.Part{
				llmtest.TextPart("Spain won Euro 2024, beating England 2–1"),
				llmtest.TextPart(" in the final. Mikel Oyarzabal scored the winner in the 86th minute."),
			}, hostedParts()...),
				llm.Part{Kind: llm.PartUsage, Usage: &ws.Usage}, finishPart(llm.FinishStop)),
		},
		{
			name: "the provider's call id is kept; a call without args gets {}; MAX_TOKENS is length",
			reply: func(*testing.T) reply {
				return chunks(
					`{"candidates": [{"content": {"parts": [{"functionCall": {"id": "fc_7", "name": "list"}}],"role": "model"},"finishReason": "MAX_TOKENS","index": 0}],"responseId": "r1"}`,
				)
			},
			want: []llm.Part{callPart("fc_7", "list", `{}`, ""), finishPart(llm.FinishLength)},
		},
		{
			name: "a signature on the text is kept as reasoning without text; SAFETY is content_filter",
			reply: func(*testing.T) reply {
				return chunks(
					`{"candidates": [{"content": {"parts": [{"text": "I can't"}],"role": "model"},"index": 0}]}`,
					`{"candidates": [{"content": {"parts": [{"text": "", "thoughtSignature": "c2ln"}],"role": "model"},"finishReason": "SAFETY","index": 0}],"usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}}`,
				)
			},
			want: []llm.Part{
				llmtest.TextPart("I can't"), reasoningPart("", "c2ln"),
				usagePart(4, 2), finishPart(llm.FinishFiltered),
			},
		},
		{
			name: "a refused prompt ends the answer, filtered",
			reply: func(*testing.T) reply {
				return chunks(`{"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},"usageMetadata": {"promptTokenCount": 8,"totalTokenCount": 8}}`)
			},
			want: []llm.Part{usagePart(8, 0), finishPart(llm.FinishFiltered)},
		},
		{
			name: "segment offsets that miss the text are placed by the segment's text, or dropped",
			reply: func(*testing.T) reply {
				return chunks(
					`{"candidates": [{"content": {"parts": [{"text": "Café au lait. Tea."}],"role": "model"},"index": 0}]}`,
					`{"candidates": [{"content": {"parts": [],"role": "model"},"finishReason": "STOP","index": 0,"groundingMetadata": {
						"groundingChunks": [{"web": {"uri": "https://a.example/", "title": "a"}}, {"retrievedContext": {"uri": "gs://b"}}],
						"groundingSupports": [
							{"segment": {"startIndex": 14, "endIndex": 17, "text": "Tea."}, "groundingChunkIndices": [0, 1, 9]},
							{"segment": {"startIndex": 0, "endIndex": 400}, "groundingChunkIndices": [0]}
						]}}]}`,
				)
			},
			want: []llm.Part{
				llmtest.TextPart("Café au lait. Tea."),
				{Kind: llm.PartHosted, Hosted: &conversation.HostedActivity{ActivityID: "", Name: "web_search", State: conversation.ActivityStarted, Input: []byte(`[]`)}},
				{Kind: llm.PartHosted, Hosted: &conversation.HostedActivity{ActivityID: "", Name: "web_search", State: conversation.ActivityCompleted, Input: []byte(`[]`), Summary: "0 queries, 1 sources"}},
				{Kind: llm.PartCitation, Citation: &conversation.Citation{Source: conversation.Source{URL: "https://a.example/", Title: "a"}, Range: &conversation.Range{Start: 15, End: 19}}},
				{Kind: llm.PartCitation, Citation: &conversation.Citation{Source: conversation.Source{URL: "https://a.example/", Title: "a"}}},
				finishPart(llm.FinishStop),
			},
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
			// Ids made up for an answer without a responseId are random.
			for _, p := range got {
				if p.Hosted != nil && regexp.MustCompile(`^search_[0-9a-f]{16}$`).MatchString(p.Hosted.ActivityID) {
					p.Hosted.ActivityID = ""
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			if n := len(b.fake.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// TestCallIDsWithoutResponseID checks the ids of calls in an answer
// without a responseId: unique within the answer and across answers, and
// made of characters every provider accepts.
func TestCallIDsWithoutResponseID(t *testing.T) {
	t.Parallel()
	two := `{"candidates": [{"content": {"parts": [{"functionCall": {"name": "a", "args": {"x": 1}}}, {"functionCall": {"name": "b"}}],"role": "model"},"finishReason": "STOP","index": 0}]}`
	b := setup(t, Config{}, chunks(two), chunks(two))
	seen := map[string]bool{}
	valid := regexp.MustCompile(`^call_[0-9a-f]{16}_[01]$`)
	for range 2 {
		resp, err := llm.Collect(b.client.Generate(context.Background(), llmtest.UserRequest("hi")))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 2 || resp.Finish != llm.FinishToolCalls {
			t.Fatalf("answer %+v, want two calls", resp)
		}
		for _, c := range resp.ToolCalls {
			if !valid.MatchString(c.ID) || seen[c.ID] {
				t.Errorf("call id %q is malformed or repeated (seen %v)", c.ID, seen)
			}
			seen[c.ID] = true
		}
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
