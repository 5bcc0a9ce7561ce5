// Package llmtest holds the conformance table every llm.Model adapter must
// pass: recorded wire traffic of the adapter's provider, replayed by an
// httptest server, collected with llm.Collect and checked against what the
// recording says and what every adapter owes the engine (text, tool calls
// with ids, names and exact argument JSON, reasoning, finish reasons, error
// classes, retries without sleeping) and a consumer that shows the answer
// as it comes (the fragments of streamed arguments, see CheckToolArgs).
//
// An adapter's test supplies its recordings in a Wire and a constructor that
// points a model at the case's Server:
//
//	func TestConformance(t *testing.T) {
//		llmtest.Conformance(t, func(t *testing.T, srv llmtest.Server) llm.Model {
//			m, err := New(Config{APIKey: srv.APIKey, BaseURL: srv.URL, Model: "m",
//				Options: provider.Options{MaxAttempts: srv.MaxAttempts, HTTPClient: srv.Client, Sleep: srv.Sleep}})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return m
//		}, wire)
//	}
//
// The package imports testing: only tests may use it.
package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// Case names a recorded stream of a Wire.
type Case string

// Recorded streams. Text, ToolCall, TwoToolCalls, UnknownBlock, Malformed
// and Cut are required; Reasoning, WebSearch and Paused are optional (their
// cases are skipped without them, for providers that lack the feature).
const (
	// CaseText is a plain text answer, ending with the stop finish reason.
	CaseText Case = "text"
	// CaseToolCall is one tool call whose arguments arrive in many chunks.
	CaseToolCall Case = "tool_call"
	// CaseTwoToolCalls is two tool calls in one answer.
	CaseTwoToolCalls Case = "two_tool_calls"
	// CaseReasoning is reasoning (thinking) followed by an answer.
	CaseReasoning Case = "reasoning"
	// CaseUnknownBlock carries a block, chunk or event kind the adapter does
	// not know beside an answer it does.
	CaseUnknownBlock Case = "unknown_block"
	// CaseMalformed is a stream with a malformed line (data that is not
	// JSON) before any part. Its Want is unused: the table expects the
	// adapter to retry and serves CaseText next.
	CaseMalformed Case = "malformed"
	// CaseCut is the start of a stream, before any part; the server sends it
	// and drops the connection. Its Want is unused: the table expects a
	// retry from the start and serves CaseText next.
	CaseCut Case = "cut"
	// CaseWebSearch is an answer to a request with the hosted web_search
	// tool: the provider's search as hosted activity (started, then
	// completed or failed, one id) and text that cites its sources.
	CaseWebSearch Case = "web_search"
	// CasePaused is an answer its provider paused midway (Anthropic's
	// pause_turn): Stream.Body pauses, each of Stream.Then goes on from
	// where the one before paused, and the last ends the answer. Want is
	// the whole answer, as one call collects it: the adapter continues a
	// paused answer itself, sending back what it had so far.
	CasePaused Case = "paused"
)

// Stream is a recorded 200 response body in the provider's event-stream
// format and the response it must collect to.
type Stream struct {
	Body string
	Want llm.Response
	// Path, when set, replaces Wire.Path for this stream's request (an
	// adapter may use another endpoint for hosted tools).
	Path string
	// Then are the bodies of the requests that continue a paused answer
	// (CasePaused).
	Then []string
}

// Sentinels are the adapter's error classes, matched with errors.Is.
type Sentinels struct {
	Auth        error // 401: the key is wrong
	RateLimited error // 429
	Unavailable error // 5xx, cut or garbled streams
}

// Wire is one provider's recorded traffic.
type Wire struct {
	// Path is the path the adapter posts to below Server.URL, e.g.
	// "/v1/chat/completions". Other requests get a 404.
	Path string
	// Streams are the recorded 200 bodies by case.
	Streams map[Case]Stream
	// ErrorBody is the provider's JSON error body for status and message.
	ErrorBody func(status int, message string) string
	// Sentinels are the adapter's error classes.
	Sentinels Sentinels
	// StreamsToolArgs says the provider streams the arguments of tool
	// calls, so that the adapter yields their fragments: each call of the
	// tool call cases must then come after its fragments (those of
	// CaseToolCall, whose arguments arrive in many chunks, more than one).
	StreamsToolArgs bool
	// Provider is the provider name of the adapter's payloads
	// (conversation.ProviderPayload.Provider): what it sends back of its
	// own answers is checked against it (see replayConformance).
	Provider string
	// NotReplayed are formats of the adapter's payloads that its
	// provider's API takes no copy of; the adapter's documentation says
	// why.
	NotReplayed []string
	// Replay is a text answer to a request with the hosted web_search tool
	// (its Path, when set, the path such a request goes to): the answer to
	// the conversations replayConformance sends.
	Replay Stream
}

// Server is the fake provider of one case: the model under test must use
// all of its fields.
type Server struct {
	// URL is the server's root (http://127.0.0.1:PORT), to which the
	// adapter appends its own path or version prefix.
	URL    string
	Client *http.Client
	// APIKey must be sent; the table checks that no error repeats it.
	APIKey string
	// MaxAttempts bounds the attempts of one call (3).
	MaxAttempts int
	// Sleep replaces the wait between attempts: it records the wait and
	// returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

// apiKey is the key of every conformance case.
const apiKey = "sk-conformance-5d1e9b7a3c"

// attempts is Server.MaxAttempts.
const attempts = 3

// reply is one answer of the fake server.
type reply = Reply

// cutReply is status 200 with body, declaring more than it sends: the
// connection drops after body.
func cutReply(body string) reply {
	return reply{Status: http.StatusOK, Body: body + strings.Repeat(" ", 1024), CutAfter: len(body)}
}

// conformanceCase is one row of the table.
type conformanceCase struct {
	name     string
	needs    Case // skipped when the wire has no such stream
	replies  func(w *Wire) []reply
	want     func(w *Wire) llm.Response // nil: an error is expected
	check    func(t *testing.T, got llm.Response)
	requests int
	waits    []time.Duration // exact waits; nil: any
	err      func(s Sentinels) error
	errHas   string   // lower-case substring of the error
	hosted   []string // the request's Params.HostedTools
	// fragments is how many argument fragments each tool call must come
	// after, when the wire's provider streams them (Wire.StreamsToolArgs).
	fragments int
}

// Conformance runs the table against the model newModel builds for each
// case's server. Each case runs in parallel in its own subtest.
func Conformance(t *testing.T, newModel func(t *testing.T, srv Server) llm.Model, wire Wire) {
	t.Helper()
	for _, c := range []Case{CaseText, CaseToolCall, CaseTwoToolCalls, CaseUnknownBlock, CaseMalformed, CaseCut} {
		if _, ok := wire.Streams[c]; !ok {
			t.Fatalf("llmtest: the wire has no %q stream", c)
		}
	}
	if wire.Path == "" || wire.ErrorBody == nil || wire.Provider == "" || wire.Replay.Body == "" {
		t.Fatal("llmtest: the wire needs a Path, an ErrorBody, a Provider and a Replay stream")
	}
	ok := func(c Case) reply { return reply{Status: http.StatusOK, Body: wire.Streams[c].Body} }
	recorded := func(c Case) func(*Wire) llm.Response {
		return func(w *Wire) llm.Response { return w.Streams[c].Want }
	}
	fail := func(status int, msg string, header map[string]string) reply {
		return reply{Status: status, Header: header, Body: wire.ErrorBody(status, msg)}
	}
	one := func(c Case) func(*Wire) []reply { return func(*Wire) []reply { return []reply{ok(c)} } }

	cases := []conformanceCase{
		{
			name: "plain text", needs: CaseText, replies: one(CaseText), want: recorded(CaseText), requests: 1,
			check: func(t *testing.T, got llm.Response) {
				if got.Text == "" || len(got.ToolCalls) != 0 || got.Finish != llm.FinishStop {
					t.Errorf("a text answer must have text, no tool call and finish %q; got %+v", llm.FinishStop, got)
				}
			},
		},
		{
			name: "one tool call with arguments in many chunks", needs: CaseToolCall, replies: one(CaseToolCall), want: recorded(CaseToolCall), requests: 1,
			fragments: 2,
			check: func(t *testing.T, got llm.Response) {
				checkCalls(t, got, 1)
			},
		},
		{
			name: "two tool calls", needs: CaseTwoToolCalls, replies: one(CaseTwoToolCalls), want: recorded(CaseTwoToolCalls), requests: 1,
			fragments: 1,
			check: func(t *testing.T, got llm.Response) {
				checkCalls(t, got, 2)
			},
		},
		{
			name: "reasoning", needs: CaseReasoning, replies: one(CaseReasoning), want: recorded(CaseReasoning), requests: 1,
			check: func(t *testing.T, got llm.Response) {
				if len(got.Reasoning) == 0 || got.Reasoning[0].Text == "" {
					t.Errorf("no reasoning text collected: %+v", got)
				}
			},
		},
		{
			name: "hosted web search with citations", needs: CaseWebSearch, replies: one(CaseWebSearch), want: recorded(CaseWebSearch), requests: 1,
			hosted: []string{"web_search"},
			check:  checkWebSearch,
		},
		{
			name: "a paused answer is continued until it ends", needs: CasePaused,
			replies: func(w *Wire) []reply {
				s := w.Streams[CasePaused]
				out := []reply{ok(CasePaused)}
				for _, b := range s.Then {
					out = append(out, reply{Status: http.StatusOK, Body: b})
				}
				return out
			},
			want: recorded(CasePaused), requests: 1 + len(wire.Streams[CasePaused].Then),
			hosted: []string{"web_search"},
		},
		{
			name: "an unknown block kind is skipped", needs: CaseUnknownBlock, replies: one(CaseUnknownBlock), want: recorded(CaseUnknownBlock), requests: 1,
			check: func(t *testing.T, got llm.Response) {
				if got.Empty() {
					t.Errorf("the known part of the answer was lost: %+v", got)
				}
			},
		},
		{
			name: "429 with Retry-After, then success", needs: CaseText,
			replies: func(*Wire) []reply {
				return []reply{fail(http.StatusTooManyRequests, "rate limited, slow down", map[string]string{"Retry-After": "7"}), ok(CaseText)}
			},
			want: recorded(CaseText), requests: 2, waits: []time.Duration{7 * time.Second},
		},
		{
			name: "500 three times, then failure", needs: CaseText,
			replies: func(*Wire) []reply {
				e := fail(http.StatusInternalServerError, "internal server error", nil)
				return []reply{e, e, e, ok(CaseText)}
			},
			requests: attempts, err: func(s Sentinels) error { return s.Unavailable },
		},
		{
			name: "a malformed SSE line before any part is retried", needs: CaseMalformed,
			replies:  func(*Wire) []reply { return []reply{ok(CaseMalformed), ok(CaseText)} },
			want:     recorded(CaseText),
			requests: 2,
		},
		{
			name: "a connection cut mid-stream before any part is retried", needs: CaseCut,
			replies: func(w *Wire) []reply {
				return []reply{cutReply(w.Streams[CaseCut].Body), ok(CaseText)}
			},
			want:     recorded(CaseText),
			requests: 2,
		},
		{
			name: "an invalid API key", needs: CaseText,
			replies: func(*Wire) []reply {
				return []reply{fail(http.StatusUnauthorized, "invalid x-api-key: "+apiKey, nil), ok(CaseText)}
			},
			requests: 1, err: func(s Sentinels) error { return s.Auth }, errHas: "auth",
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, ok := wire.Streams[tc.needs]; !ok {
				t.Skipf("the wire has no %q stream", tc.needs)
			}
			run(t, newModel, &wire, tc)
		})
	}
	t.Run("replay", func(t *testing.T) {
		t.Parallel()
		replayConformance(t, newModel, &wire)
	})
}

// run plays one case.
func run(t *testing.T, newModel func(t *testing.T, srv Server) llm.Model, wire *Wire, tc conformanceCase) {
	path := wire.Path
	if p := wire.Streams[tc.needs].Path; p != "" {
		path = p
	}
	f := &Replayer{Paths: []string{path}, Replies: tc.replies(wire), Exhausted: reply{
		Status: http.StatusInternalServerError, Body: wire.ErrorBody(http.StatusInternalServerError, "no more replies"),
	}}
	waits := &Waits{}
	hs := httptest.NewServer(f)
	t.Cleanup(hs.Close)
	m := newModel(t, Server{
		URL:         hs.URL,
		Client:      hs.Client(),
		APIKey:      apiKey,
		MaxAttempts: attempts,
		Sleep:       waits.Sleep,
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	parts, got, err := collect(ctx, m, tc.hosted)

	switch {
	case tc.err != nil:
		if err == nil {
			t.Fatalf("no error; collected %+v", got)
		}
		if want := tc.err(wire.Sentinels); !errors.Is(err, want) {
			t.Errorf("error %q does not wrap %q", err, want)
		}
		if tc.errHas != "" && !strings.Contains(strings.ToLower(err.Error()), tc.errHas) {
			t.Errorf("error %q does not name %q", err, tc.errHas)
		}
		if strings.Contains(err.Error(), apiKey) {
			t.Errorf("error %q carries the API key", err)
		}
	case err != nil:
		t.Fatalf("Generate: %v", err)
	default:
		if diff := cmp.Diff(tc.want(wire), got); diff != "" {
			t.Errorf("response (-want +got):\n%s", diff)
		}
		if tc.check != nil {
			tc.check(t, got)
		}
		atLeast := 0
		if wire.StreamsToolArgs {
			atLeast = tc.fragments
		}
		CheckToolArgs(t, parts, atLeast)
	}
	if n := len(f.Requests()); n != tc.requests {
		t.Errorf("%d requests, want %d", n, tc.requests)
	}
	if tc.waits != nil {
		if diff := cmp.Diff(tc.waits, waits.All()); diff != "" {
			t.Errorf("waits (-want +got):\n%s", diff)
		}
	}
}

// collect runs one request and collects the answer, and the parts it came
// in, turning a panic of the adapter into a test failure with a clear
// message.
func collect(ctx context.Context, m llm.Model, hosted []string) (parts []llm.Part, resp llm.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("llmtest: the adapter panicked: %v", p)
		}
	}()
	req := &llm.Request{Messages: []conversation.Message{
		{Role: conversation.MessageUser, Content: []conversation.Block{conversation.TextBlock("Hello")}},
	}, Params: llm.Params{HostedTools: hosted}}
	resp, err = llm.Collect(func(yield func(llm.Part, error) bool) {
		for p, err := range m.Generate(ctx, req) {
			if err == nil {
				parts = append(parts, p)
			}
			if !yield(p, err) {
				return
			}
		}
	})
	return parts, resp, err
}

// checkCalls checks what every answer of n tool calls owes the engine:
// distinct non-empty ids, names, arguments that are a JSON object, and the
// tool_calls finish reason.
func checkCalls(t *testing.T, got llm.Response, n int) {
	t.Helper()
	if len(got.ToolCalls) != n {
		t.Fatalf("%d tool calls, want %d", len(got.ToolCalls), n)
	}
	ids := map[string]bool{}
	for i, c := range got.ToolCalls {
		if c.ID == "" || ids[c.ID] {
			t.Errorf("tool call %d: id %q is empty or repeated", i, c.ID)
		}
		ids[c.ID] = true
		if c.Name == "" {
			t.Errorf("tool call %d has no name", i)
		}
		var obj map[string]any
		if err := json.Unmarshal(c.Arguments, &obj); err != nil || obj == nil {
			t.Errorf("tool call %d: arguments %s are not a JSON object", i, c.Arguments)
		}
	}
	if got.Finish != llm.FinishToolCalls {
		t.Errorf("finish %q, want %q", got.Finish, llm.FinishToolCalls)
	}
}

// checkWebSearch checks what a hosted search owes the engine: every
// activity named, a terminal state for each started one under the same id,
// and citations with a source URL whose ranges lie inside the text.
func checkWebSearch(t *testing.T, got llm.Response) {
	t.Helper()
	if len(got.Hosted) == 0 {
		t.Fatal("no hosted activity collected")
	}
	open := map[string]bool{}
	for i, h := range got.Hosted {
		if h.ActivityID == "" || h.Name == "" || !h.State.Known() {
			t.Errorf("hosted activity %d lacks an id, a name or a known state: %+v", i, h)
		}
		open[h.ActivityID] = h.State == conversation.ActivityStarted
	}
	for id, unfinished := range open {
		if unfinished {
			t.Errorf("hosted activity %q started and never completed or failed", id)
		}
	}
	if len(got.Citations) == 0 || got.Text == "" {
		t.Fatalf("a search-backed answer needs text and citations; got %+v", got)
	}
	for i, c := range got.Citations {
		if c.Source.URL == "" {
			t.Errorf("citation %d has no source URL", i)
		}
		if r := c.Range; r != nil && (r.Start < 0 || r.Start > r.End || r.End > len(got.Text)) {
			t.Errorf("citation %d: range %+v is outside the %d-byte text", i, *r, len(got.Text))
		}
	}
}
