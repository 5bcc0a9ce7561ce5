package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testKey is the API key of every test client. No error or log line may
// contain it.
const testKey = "sk-ant-test-3b9d2f7e1a6c4085"

// reply is one answer of the fake server; received, a request it got.
type (
	reply    = llmtest.Reply
	received = llmtest.Received
)

// events is a 200 reply streaming the given data payloads, each under the
// event name of its "type" field.
func events(data ...string) reply {
	var sb strings.Builder
	for _, d := range data {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(d), &v)
		sb.WriteString("event: " + v.Type + "\ndata: " + d + "\n\n")
	}
	return reply{Status: http.StatusOK, Body: sb.String()}
}

// apiError is an error body in Anthropic's format.
func apiError(typ, message string) string {
	b, _ := json.Marshal(map[string]any{
		"type":       "error",
		"error":      map[string]any{"type": typ, "message": message},
		"request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
	})
	return string(b)
}

// errorReply is an error reply with an Anthropic error body.
func errorReply(status int, typ, message string, header map[string]string) reply {
	return reply{Status: status, Header: header, Body: apiError(typ, message)}
}

// bundle is a client wired to a fake server.
type bundle struct {
	fake   *llmtest.Replayer
	client *Client
	logs   *observer.ObservedLogs
	// waits returns every back-off the client asked for.
	waits func() []time.Duration
}

// setup starts a fake server playing replies and a client for it whose
// sleeps return at once (recorded in waits). cfg fields set by the caller
// are kept.
func setup(t *testing.T, cfg Config, replies ...reply) bundle {
	t.Helper()
	f := &llmtest.Replayer{Paths: []string{"/v1/messages"}, Replies: replies, Exhausted: errorReply(http.StatusInternalServerError, "api_error", "no more replies", nil)}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)

	core, logs := observer.New(zap.DebugLevel)
	waits := &llmtest.Waits{}
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	cfg.BaseURL = srv.URL
	if cfg.Model == "" {
		cfg.Model = "claude-test"
	}
	cfg.HTTPClient = srv.Client()
	cfg.Logger = zap.New(core)
	if cfg.Sleep == nil {
		cfg.Sleep = waits.Sleep
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { llmtest.NoKeyInLogs(t, logs, testKey) })
	return bundle{fake: f, client: c, logs: logs, waits: waits.All}
}

func usagePart(in, out int) llm.Part {
	return llm.Part{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: in, OutputTokens: out}}
}

func finishPart(f llm.FinishReason) llm.Part { return llm.Part{Kind: llm.PartFinish, Finish: f} }

func reasoningPart(text, signature string) llm.Part {
	return llm.Part{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{Text: text, Signature: signature}}
}

func hostedPart(h conversation.HostedActivity) llm.Part {
	return llm.Part{Kind: llm.PartHosted, Hosted: &h}
}

func citationPart(c conversation.Citation) llm.Part {
	return llm.Part{Kind: llm.PartCitation, Citation: &c}
}

// recorded returns, exactly as sent, the data of a testdata file's events
// at the JSON path (e.g. "content_block", "delta.citation") of each event
// that has one and whose type is typ, in order.
func recorded(t *testing.T, name, typ string, path ...string) []string {
	t.Helper()
	var out []string
	for line := range strings.Lines(llmtest.Recording(t, name)) {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(ev["type"]) != `"`+typ+`"` {
			continue
		}
		raw, found := json.RawMessage(data), true
		for _, key := range path {
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) != nil {
				found = false
				break
			}
			raw, found = obj[key]
			if !found {
				break
			}
		}
		if found {
			out = append(out, string(raw))
		}
	}
	return out
}

// searchPayload is the payload of a web_search_tool_result block, raw.
func searchPayload(raw string) *conversation.ProviderPayload {
	return &conversation.ProviderPayload{Provider: "anthropic", Format: "web_search_tool_result", Version: "web_search_20250305", Value: json.RawMessage(raw)}
}

// usePayload is the payload of a server_tool_use block, raw.
func usePayload(raw string) *conversation.ProviderPayload {
	return &conversation.ProviderPayload{Provider: "anthropic", Format: "server_tool_use", Version: "web_search_20250305", Value: json.RawMessage(raw)}
}

// citationPayload is the replay payload of a citation, raw.
func citationPayload(raw string) *conversation.ProviderPayload {
	return &conversation.ProviderPayload{Provider: "anthropic", Format: "citation", Version: "web_search_20250305", Value: json.RawMessage(raw)}
}

// redactedPayload is the payload of a redacted_thinking block's data.
func redactedPayload(data string) *conversation.ProviderPayload {
	return &conversation.ProviderPayload{Provider: "anthropic", Format: "redacted_thinking", Version: "2026-10-21", Value: json.RawMessage(`"` + data + `"`)}
}

// webSearchParts is what testdata/web_search.sse must stream, in order:
// text, the search started (its block as received in its payload) and
// completed under one id, more text, the cited
// block's text then its two citations anchored to its span, the last text,
// usage with one search, the finish reason.
func webSearchParts(t *testing.T) []llm.Part {
	t.Helper()
	const file = "web_search.sse"
	blocks := recorded(t, file, "content_block_start", "content_block")
	cites := recorded(t, file, "content_block_delta", "delta", "citation")
	if len(blocks) != 6 || len(cites) != 2 {
		t.Fatalf("%s: %d blocks and %d citations, want 6 and 2", file, len(blocks), len(cites))
	}
	const id = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE"
	before := "Let me look that up." + "According to the forecast, "
	cited := "Paris is sunny at 18°C today"
	span := &conversation.Range{Start: len(before), End: len(before) + len(cited)}
	return []llm.Part{
		llmtest.TextPart("Let me look"), llmtest.TextPart(" that up."),
		hostedPart(conversation.HostedActivity{
			ActivityID: id, Name: "web_search", State: conversation.ActivityStarted, Input: json.RawMessage(`{"query": "Paris weather today"}`),
			Payload: usePayload(`{"id":"` + id + `","input":{"query":"Paris weather today"},"name":"web_search","type":"server_tool_use"}`),
		}),
		hostedPart(conversation.HostedActivity{ActivityID: id, Name: "web_search", State: conversation.ActivityCompleted, Summary: "2 results", Payload: searchPayload(blocks[2])}),
		llmtest.TextPart("According to the forecast, "),
		llmtest.TextPart("Paris is sunny"), llmtest.TextPart(" at 18°C today"),
		citationPart(conversation.Citation{
			Source:  conversation.Source{URL: "https://weather.example.com/paris", Title: "Paris weather"},
			Excerpt: "Today: sunny, high of 18°C, light wind from the west.",
			Range:   span, Replay: citationPayload(cites[0]),
		}),
		citationPart(conversation.Citation{
			Source:  conversation.Source{URL: "https://forecast.example.org/fr/paris", Title: "Paris, France - 10 day forecast"},
			Excerpt: "Sat 29: 18° / 9°, sunny",
			Range:   span, Replay: citationPayload(cites[1]),
		}),
		llmtest.TextPart("."),
		{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: 2112, OutputTokens: 164, Hosted: map[string]int{"web_search": 1}}},
		finishPart(llm.FinishStop),
	}
}

// collected is parts collected as llm.Collect would.
func collected(t *testing.T, parts []llm.Part) llm.Response {
	t.Helper()
	r, err := llm.Collect(func(yield func(llm.Part, error) bool) {
		for _, p := range parts {
			if !yield(p, nil) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The web searches of testdata/web_search_paused_*.sse: the first response
// runs the first and pauses as the second starts; the next runs the second
// and the third and pauses; the last ends the answer.
const (
	searchToday    = "srvtoolu_01LyonToday7mXcQ4wRb9Ts"
	searchTomorrow = "srvtoolu_01LyonTomorrowK2pV6nHd3J"
	searchWeekend  = "srvtoolu_01LyonWeekendR8vT1zGx5N"
)

// pausedFile is the n-th response of the paused answer.
func pausedFile(n int) string { return fmt.Sprintf("web_search_paused_%d.sse", n) }

// useBlock is a server_tool_use block of web_search as received, its input
// assembled.
func useBlock(id, query string) string {
	return `{"id":"` + id + `","input":{"query":"` + query + `"},"name":"web_search","type":"server_tool_use"}`
}

// pausedParts is what the three responses of a paused answer must stream
// as one answer, in order: each response's parts and usage, text offsets
// and citation ranges running over the whole answer's text, one finish.
func pausedParts(t *testing.T) []llm.Part {
	t.Helper()
	b1, b2 := recorded(t, pausedFile(1), "content_block_start", "content_block"), recorded(t, pausedFile(2), "content_block_start", "content_block")
	cite := func(n int) string { return recorded(t, pausedFile(n), "content_block_delta", "delta", "citation")[0] }
	started := func(id, query string) llm.Part {
		return hostedPart(conversation.HostedActivity{
			ActivityID: id, Name: "web_search", State: conversation.ActivityStarted,
			Input: json.RawMessage(`{"query": "` + query + `"}`), Payload: usePayload(useBlock(id, query)),
		})
	}
	completed := func(id, raw string) llm.Part {
		return hostedPart(conversation.HostedActivity{ActivityID: id, Name: "web_search", State: conversation.ActivityCompleted, Summary: "1 result", Payload: searchPayload(raw)})
	}
	const intro, today, tomorrow, weekend = "I'll compare two sources. ", "Lyon is cloudy at 12°C today", "; rain is expected tomorrow", ", and the weekend looks dry"
	span := func(before, cited string) *conversation.Range {
		return &conversation.Range{Start: len(before), End: len(before) + len(cited)}
	}
	return []llm.Part{
		reasoningPart("Two searches: today, then tomorrow.", "EqQBCgIYAhIMpause1sigZA2b3hGgx"),
		llmtest.TextPart("I'll compare"), llmtest.TextPart(" two sources. "),
		started(searchToday, "Lyon weather today"), completed(searchToday, b1[3]),
		llmtest.TextPart("Lyon is cloudy"), llmtest.TextPart(" at 12°C today"),
		citationPart(conversation.Citation{
			Source: conversation.Source{URL: "https://weather.example.com/lyon", Title: "Lyon weather"}, Excerpt: "Today: cloudy, 12°C.",
			Range: span(intro, today), Replay: citationPayload(cite(1)),
		}),
		started(searchTomorrow, "Lyon forecast tomorrow"),
		{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: 2203, OutputTokens: 96, Hosted: map[string]int{"web_search": 1}}},
		// The first continuation: the paused search ends.
		completed(searchTomorrow, b2[0]),
		llmtest.TextPart(tomorrow),
		citationPart(conversation.Citation{
			Source: conversation.Source{URL: "https://forecast.example.org/fr/lyon", Title: "Lyon, France - 10 day forecast"}, Excerpt: "Sun 30: 10° / 4°, rain",
			Range: span(intro+today, tomorrow), Replay: citationPayload(cite(2)),
		}),
		started(searchWeekend, "Lyon weather weekend"), completed(searchWeekend, b2[3]),
		{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: 2487, OutputTokens: 88, Hosted: map[string]int{"web_search": 2}}},
		// The second continuation ends the answer.
		llmtest.TextPart(", and the weekend"), llmtest.TextPart(" looks dry"),
		citationPart(conversation.Citation{
			Source: conversation.Source{URL: "https://weather.example.com/lyon/weekend", Title: "Lyon weekend outlook"}, Excerpt: "Saturday and Sunday: dry, 14°C.",
			Range: span(intro+today+tomorrow, weekend), Replay: citationPayload(cite(3)),
		}),
		llmtest.TextPart("."),
		usagePart(2701, 35),
		finishPart(llm.FinishStop),
	}
}
