package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/provider"
)

// searchRequest is a request of one user message with the hosted web
// search: it goes to the Responses API.
func searchRequest(text string) *llm.Request {
	r := llmtest.UserRequest(text)
	r.Params.HostedTools = []string{"web_search"}
	return r
}

// events is a 200 reply streaming Responses API events, each a JSON object
// whose "type" names its SSE event.
func events(data ...string) reply {
	var sb strings.Builder
	for _, d := range data {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(d), &v) // a malformed event goes out unnamed
		fmt.Fprintf(&sb, "event: %s\ndata: %s\n\n", v.Type, d)
	}
	return reply{Status: 200, Body: sb.String()}
}

func hostedPart(id string, state conversation.ActivityState, input string) llm.Part {
	h := &conversation.HostedActivity{ActivityID: id, Name: "web_search", State: state}
	if input != "" {
		h.Input = json.RawMessage(input)
	}
	return llm.Part{Kind: llm.PartHosted, Hosted: h}
}

// endedPart is the final state of a search, keeping item, the
// web_search_call item as received.
func endedPart(id string, state conversation.ActivityState, input, item string) llm.Part {
	p := hostedPart(id, state, input)
	p.Hosted.Payload = &conversation.ProviderPayload{Provider: "openai", Format: "web_search_call", Version: "responses.item.v1", Value: json.RawMessage(item)}
	return p
}

// citationPart is a citation keeping raw, the url_citation annotation as
// received.
func citationPart(url, title string, start, end int, raw string) llm.Part {
	return llm.Part{Kind: llm.PartCitation, Citation: &conversation.Citation{
		Source: conversation.Source{URL: url, Title: title},
		Range:  &conversation.Range{Start: start, End: end},
		Replay: &conversation.ProviderPayload{Provider: "openai", Format: "url_citation", Version: "responses.annotation.v1", Value: json.RawMessage(raw)},
	}}
}

// reasoningKept is the payload keeping item, a reasoning item as
// received.
func reasoningKept(item string) *conversation.ProviderPayload {
	return &conversation.ProviderPayload{Provider: "openai", Format: "reasoning", Version: "responses.item.v1", Value: json.RawMessage(item)}
}

// recorded returns, byte for byte, field of the n-th event of type typ in
// the recording name: an item or an annotation as the API sent it.
func recorded(t *testing.T, name, typ, field string, n int) string {
	t.Helper()
	for _, line := range strings.Split(llmtest.Recording(t, name), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if string(ev["type"]) != `"`+typ+`"` {
			continue
		}
		if n == 0 {
			return string(ev[field])
		}
		n--
	}
	t.Fatalf("%s has no such %s event", name, typ)
	return ""
}

// fragment is a fragment of the arguments of the recorded call to
// get_weather (responses_function_call.sse).
func fragment(args string) llm.Part {
	return llmtest.ArgsPart("call_Kx2mVq8RzT4nLp0sWd6yHj1c", "get_weather", args)
}

func searchUsagePart(in, out, searches int) llm.Part {
	u := &llm.Usage{InputTokens: in, OutputTokens: out}
	if searches > 0 {
		u.Hosted = map[string]int{"web_search": searches}
	}
	return llm.Part{Kind: llm.PartUsage, Usage: u}
}

// The recorded web search, part by part.
const (
	searchID    = "ws_68f1c2aa4c6c8190b7e1d2f3a4b5c6d7"
	searchQuery = `{"query":"Eiffel Tower height ticket price 2026"}`
	searchText  = "The Eiffel Tower’s height is 330 m — its antenna included " +
		"([toureiffel.paris](https://www.toureiffel.paris/en/the-monument/key-figures?utm_source=openai))" +
		". An adult ticket to the top costs €35 " +
		"([fr.wikipedia.org](https://fr.wikipedia.org/wiki/Tour_Eiffel?utm_source=openai))."
	url1, title1 = "https://www.toureiffel.paris/en/the-monument/key-figures?utm_source=openai", "Key figures – Eiffel Tower"
	url2, title2 = "https://fr.wikipedia.org/wiki/Tour_Eiffel?utm_source=openai", "Tour Eiffel — Wikipédia"
)

func webSearchParts(t *testing.T) []llm.Part {
	const rec = "responses_web_search.sse"
	parts := []llm.Part{
		hostedPart(searchID, conversation.ActivityStarted, ""),
		endedPart(searchID, conversation.ActivityCompleted, searchQuery, recorded(t, rec, "response.output_item.done", "item", 0)),
	}
	for _, d := range []string{"The Eiffel", " Tower’s height", " is 330 m — its", " antenna included ",
		"([toureiffel.paris](https://www.toureiffel.paris/en/the-monument/key-figures?utm_source=openai))",
		". An adult", " ticket to the top", " costs €35 ",
		"([fr.wikipedia.org](https://fr.wikipedia.org/wiki/Tour_Eiffel?utm_source=openai))", "."} {
		parts = append(parts, llmtest.TextPart(d))
	}
	// OpenAI's character offsets 58-154 and 193-274; ’, — and € take three
	// bytes each.
	return append(parts,
		citationPart(url1, title1, 62, 158, recorded(t, rec, "response.output_text.annotation.added", "annotation", 0)),
		citationPart(url2, title2, 199, 280, recorded(t, rec, "response.output_text.annotation.added", "annotation", 1)),
		searchUsagePart(8413, 74, 1), finishPart(llm.FinishStop),
	)
}

// TestResponseStreams replays Responses API streams and checks the parts,
// in order.
func TestResponseStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply func(t *testing.T) reply
		want  []llm.Part
	}{
		{
			name:  "web search with url citations, offsets in bytes",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "responses_web_search.sse") },
			want:  webSearchParts(t),
		},
		{
			name:  "reasoning, then a function call with arguments in many deltas",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "responses_function_call.sse") },
			want: []llm.Part{
				{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{
					Text:    "**Checking the weather**\n\nThe user wants Paris weather; I will call get_weather.",
					Payload: reasoningKept(recorded(t, "responses_function_call.sse", "response.output_item.done", "item", 0)),
				}},
				fragment(`{"`), fragment("location"), fragment(`":"`), fragment("Paris"), fragment(","), fragment(" France"),
				fragment(`","`), fragment("unit"), fragment(`":"`), fragment("celsius"), fragment(`"}`),
				llmtest.CallPart("call_Kx2mVq8RzT4nLp0sWd6yHj1c", "get_weather", `{"location":"Paris, France","unit":"celsius"}`),
				usagePart(342, 151), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name:  "a failed web search",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "responses_search_failed.sse") },
			want: []llm.Part{
				hostedPart("ws_68f1c4c1bb228190cc33dd44ee55ff66", conversation.ActivityStarted, ""),
				endedPart("ws_68f1c4c1bb228190cc33dd44ee55ff66", conversation.ActivityFailed, `{"query":"brain engine release notes"}`,
					recorded(t, "responses_search_failed.sse", "response.output_item.done", "item", 0)),
				llmtest.TextPart("I could not"), llmtest.TextPart(" search the web"), llmtest.TextPart(" just now."),
				usagePart(2104, 12), finishPart(llm.FinishStop),
			},
		},
		{
			name:  "unknown event and item kinds are skipped",
			reply: func(t *testing.T) reply { return llmtest.Streamed(t, "responses_unknown.sse") },
			want:  []llm.Part{llmtest.TextPart("Still "), llmtest.TextPart("here."), usagePart(120, 3), finishPart(llm.FinishStop)},
		},
		{
			name: "annotations only in the finished items, over two messages",
			reply: func(*testing.T) reply {
				return events(
					`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Größe: "}`,
					`{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Größe: ","annotations":[]}]}}`,
					`{"type":"response.output_text.delta","item_id":"msg_2","output_index":1,"content_index":0,"delta":"330 m "}`,
					`{"type":"response.output_text.delta","item_id":"msg_2","output_index":1,"content_index":0,"delta":"(wiki)"}`,
					`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_2","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"330 m (wiki)","annotations":[`+
						`{"type":"url_citation","start_index":6,"end_index":12,"url":"https://de.wikipedia.org/wiki/Eiffelturm","title":"Eiffelturm"},`+
						`{"type":"file_citation","index":3,"file_id":"file_1","filename":"a.pdf"},`+
						`{"type":"url_citation","start_index":40,"end_index":99,"url":"https://example.com/out-of-range","title":""}]}]}}`,
					`{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}`,
				)
			},
			want: []llm.Part{
				llmtest.TextPart("Größe: "),
				llmtest.TextPart("330 m "), llmtest.TextPart("(wiki)"),
				citationPart("https://de.wikipedia.org/wiki/Eiffelturm", "Eiffelturm", 9+6, 9+12, // "Größe: " is 9 bytes
					`{"type":"url_citation","start_index":6,"end_index":12,"url":"https://de.wikipedia.org/wiki/Eiffelturm","title":"Eiffelturm"}`),
				citationPart("https://example.com/out-of-range", "", 21, 21, // clamped to the text
					`{"type":"url_citation","start_index":40,"end_index":99,"url":"https://example.com/out-of-range","title":""}`),
				finishPart(llm.FinishStop),
			},
		},
		{
			name: "searches the stream never finishes: completed when it said so, else failed",
			reply: func(*testing.T) reply {
				return events(
					`{"type":"response.web_search_call.in_progress","item_id":"ws_a","output_index":0}`,
					`{"type":"response.web_search_call.completed","item_id":"ws_a","output_index":0}`,
					`{"type":"response.output_item.added","output_index":1,"item":{"id":"ws_b","type":"web_search_call","status":"in_progress","action":{"type":"search","query":"q"}}}`,
					`{"type":"response.output_text.delta","item_id":"msg","output_index":2,"content_index":0,"delta":"ok"}`,
					`{"type":"response.completed","response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6}}}`,
				)
			},
			want: []llm.Part{
				hostedPart("ws_a", conversation.ActivityStarted, ""),
				hostedPart("ws_b", conversation.ActivityStarted, `{"query":"q"}`),
				llmtest.TextPart("ok"),
				hostedPart("ws_a", conversation.ActivityCompleted, ""),
				hostedPart("ws_b", conversation.ActivityFailed, `{"query":"q"}`),
				searchUsagePart(5, 1, 1), finishPart(llm.FinishStop),
			},
		},
		{
			name: "incomplete for max_output_tokens",
			reply: func(*testing.T) reply {
				return events(
					`{"type":"response.output_text.delta","item_id":"msg","output_index":0,"content_index":0,"delta":"The tower is"}`,
					`{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[],"usage":{"input_tokens":9,"output_tokens":16,"total_tokens":25}}}`,
				)
			},
			want: []llm.Part{llmtest.TextPart("The tower is"), usagePart(9, 16), finishPart(llm.FinishLength)},
		},
		{
			name: "incomplete for the content filter, with a refusal",
			reply: func(*testing.T) reply {
				return events(
					`{"type":"response.refusal.delta","item_id":"msg","output_index":0,"content_index":0,"delta":"I can't help with that."}`,
					`{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}}`,
				)
			},
			want: []llm.Part{llmtest.TextPart("I can't help with that."), finishPart(llm.FinishFiltered)},
		},
		{
			name: "a call without id or arguments, a second call by output index alone",
			reply: func(*testing.T) reply {
				return events(
					`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","name":"get_time"}}`,
					`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"","name":"get_time"}}`,
					`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"call_b","name":"b","arguments":""}}`,
					`{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"x\":"}`,
					`{"type":"response.function_call_arguments.delta","output_index":1,"delta":"1}"}`,
					`{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}`,
				)
			},
			want: []llm.Part{
				llmtest.ArgsPart("call_b", "b", `{"x":`), llmtest.ArgsPart("call_b", "b", `1}`),
				llmtest.CallPart("call_0", "get_time", `{}`), llmtest.CallPart("call_b", "b", `{"x":1}`), finishPart(llm.FinishToolCalls),
			},
		},
		{
			name: "a call whose call_id comes after its arguments began keeps the id its fragments went out under",
			reply: func(*testing.T) reply {
				return events(
					`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"{\"message\":","name":"respond"}}`,
					`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"\"Hi\"}"}`,
					`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"message\":\"Hi\"}","call_id":"call_late","name":"respond"}}`,
					`{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}`,
				)
			},
			want: []llm.Part{
				llmtest.ArgsPart("call_0", "respond", `{"message":`), llmtest.ArgsPart("call_0", "respond", `"Hi"}`),
				llmtest.CallPart("call_0", "respond", `{"message":"Hi"}`), finishPart(llm.FinishToolCalls),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{}, tt.reply(t))
			got, err := llmtest.Drain(t, context.Background(), b.client, searchRequest("hi"))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			llmtest.CheckToolArgs(t, got, 0)
			reqs := b.fake.Requests()
			if len(reqs) != 1 || reqs[0].Path != "/v1/responses" {
				t.Errorf("requests %+v, want one to /v1/responses", reqs)
			}
		})
	}
}

// TestResponseCollect checks that the recorded search collects into the
// response the engine reads, its citation ranges over the cited text.
func TestResponseCollect(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{}, llmtest.Streamed(t, "responses_web_search.sse"))
	resp, err := llm.Collect(b.client.Generate(context.Background(), searchRequest("How tall is the Eiffel Tower?")))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != searchText {
		t.Errorf("text = %q, want %q", resp.Text, searchText)
	}
	cited := []string{
		"([toureiffel.paris](https://www.toureiffel.paris/en/the-monument/key-figures?utm_source=openai))",
		"([fr.wikipedia.org](https://fr.wikipedia.org/wiki/Tour_Eiffel?utm_source=openai))",
	}
	if len(resp.Citations) != len(cited) {
		t.Fatalf("%d citations, want %d", len(resp.Citations), len(cited))
	}
	for i, c := range resp.Citations {
		if got := resp.Text[c.Range.Start:c.Range.End]; got != cited[i] {
			t.Errorf("citation %d covers %q, want %q", i, got, cited[i])
		}
	}
	if diff := cmp.Diff(llm.Usage{InputTokens: 8413, OutputTokens: 74, Hosted: map[string]int{"web_search": 1}}, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestResponseFailures covers failures of Responses API streams: which are
// retried, and the error classes.
func TestResponseFailures(t *testing.T) {
	t.Parallel()
	okParts := webSearchParts(t)
	tests := []struct {
		name     string
		replies  func(t *testing.T) []reply
		want     []llm.Part // parts before the error, or all of them
		requests int
		err      error    // sentinel the error wraps; nil for success
		errHas   []string // substrings of the error
	}{
		{
			name: "an error event before any part is retried",
			replies: func(t *testing.T) []reply {
				return []reply{
					events(`{"type":"error","code":"server_error","message":"The server had an error while processing your request.","param":null,"sequence_number":1}`),
					llmtest.Streamed(t, "responses_web_search.sse"),
				}
			},
			want: okParts, requests: 2,
		},
		{
			name: "an error event of the nested form is retried",
			replies: func(t *testing.T) []reply {
				return []reply{
					events(`{"type":"error","sequence_number":1,"error":{"type":"server_error","code":"server_error","message":"Internal error","param":null}}`),
					llmtest.Streamed(t, "responses_web_search.sse"),
				}
			},
			want: okParts, requests: 2,
		},
		{
			name: "a response failed for the rate limit is retried",
			replies: func(t *testing.T) []reply {
				return []reply{
					events(`{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached for gpt-4.1 on tokens per min."},"output":[]}}`),
					llmtest.Streamed(t, "responses_web_search.sse"),
				}
			},
			want: okParts, requests: 2,
		},
		{
			name: "a response failed for the prompt is not retried",
			replies: func(t *testing.T) []reply {
				return []reply{
					events(`{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"invalid_prompt","message":"Invalid prompt: your prompt was flagged."},"output":[]}}`),
					llmtest.Streamed(t, "responses_web_search.sse"),
				}
			},
			requests: 1, err: ErrBadRequest, errHas: []string{"the response failed: Invalid prompt", "invalid_prompt"},
		},
		{
			name: "a response failed for the context window is not retried, and says so",
			replies: func(t *testing.T) []reply {
				return []reply{
					events(`{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."},"output":[]}}`),
					llmtest.Streamed(t, "responses_web_search.sse"),
				}
			},
			requests: 1, err: provider.ErrContextTooLong, errHas: []string{"the response failed: Your input exceeds the context window", "context_length_exceeded"},
		},
		{
			name: "an error event for an exhausted quota is not retried, and the key is removed",
			replies: func(t *testing.T) []reply {
				return []reply{
					events(`{"type":"error","code":"insufficient_quota","message":"Quota exceeded for key ` + testKey + `"}`),
					llmtest.Streamed(t, "responses_web_search.sse"),
				}
			},
			requests: 1, err: ErrRateLimited, errHas: []string{"error event in the stream: Quota exceeded for key [redacted]", "insufficient_quota"},
		},
		{
			name: "an error event after text is not retried",
			replies: func(t *testing.T) []reply {
				return []reply{
					events(
						`{"type":"response.output_text.delta","item_id":"msg","output_index":0,"content_index":0,"delta":"Partial"}`,
						`{"type":"error","code":"server_error","message":"The model stopped."}`,
					),
					llmtest.Streamed(t, "responses_web_search.sse"),
				}
			},
			want: []llm.Part{llmtest.TextPart("Partial")}, requests: 1, err: ErrUnavailable,
			errHas: []string{"error event in the stream: The model stopped.", "not retried"},
		},
		{
			name: "a stream cut before any part is retried from the start",
			replies: func(t *testing.T) []reply {
				return []reply{llmtest.CutStream(t, "responses_web_search.sse", 2), llmtest.Streamed(t, "responses_web_search.sse")}
			},
			want: okParts, requests: 2,
		},
		{
			name: "a stream cut after text is an error",
			replies: func(t *testing.T) []reply {
				// created, in_progress, five search events, the message's two
				// opening events, then the first text delta.
				return []reply{llmtest.CutStream(t, "responses_web_search.sse", 10), llmtest.Streamed(t, "responses_web_search.sse")}
			},
			want:     okParts[:3],
			requests: 1, err: ErrUnavailable, errHas: []string{"the stream was cut", "not retried"},
		},
		{
			name: "a stream ending without its response is retried",
			replies: func(t *testing.T) []reply {
				return []reply{
					events(`{"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}`),
					llmtest.Streamed(t, "responses_web_search.sse"),
				}
			},
			want: okParts, requests: 2,
		},
		{
			name: "401 on the Responses API is ErrAuth",
			replies: func(*testing.T) []reply {
				return []reply{jsonError(401, "Incorrect API key provided: "+testKey, "invalid_api_key", nil)}
			},
			requests: 1, err: ErrAuth, errHas: []string{"HTTP 401", "[redacted]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{}, tt.replies(t)...)
			got, err := llmtest.Drain(t, context.Background(), b.client, searchRequest("hi"))
			if tt.err == nil && err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				if tt.err != provider.ErrContextTooLong && errors.Is(err, provider.ErrContextTooLong) {
					t.Errorf("err = %v: marked as too long for the context window", err)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("err %q lacks %q", err, s)
					}
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("the error carries the API key")
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			if n := len(b.fake.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
		})
	}
}
