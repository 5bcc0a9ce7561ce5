package openai

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/provider"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestRetries covers which failures are retried, how long the client waits,
// and what error ends a call.
func TestRetries(t *testing.T) {
	t.Parallel()
	okText := []llm.Part{llmtest.TextPart("Hello"), llmtest.TextPart(", world"), llmtest.TextPart("! How can I help?"), usagePart(19, 10), finishPart(llm.FinishStop)}
	tests := []struct {
		name     string
		cfg      Config
		replies  func(t *testing.T) []reply
		ctx      func() (context.Context, context.CancelFunc)
		want     []llm.Part // parts before the error, or all of them
		requests int
		waits    []time.Duration // exact waits; nil with waitsIn checks ranges
		waitsIn  [][2]time.Duration
		err      error    // sentinel the error wraps; nil for success
		errHas   []string // substrings of the error
	}{
		{
			name: "429 with Retry-After in seconds, then success",
			replies: func(t *testing.T) []reply {
				return []reply{
					jsonError(429, "Rate limit reached for gpt-test on requests per min (RPM): Limit 3, Used 3.", "rate_limit_exceeded", map[string]string{"Retry-After": "7"}),
					llmtest.Streamed(t, "text.sse"),
				}
			},
			want: okText, requests: 2, waits: []time.Duration{7 * time.Second},
		},
		{
			name: "429 with Retry-After as an HTTP date, then success",
			cfg:  Config{Options: provider.Options{Now: func() time.Time { return epoch }}},
			replies: func(t *testing.T) []reply {
				date := epoch.Add(30 * time.Second).Format(http.TimeFormat)
				return []reply{jsonError(429, "slow down", "", map[string]string{"Retry-After": date}), llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waits: []time.Duration{30 * time.Second},
		},
		{
			name: "429 with Retry-After-Ms, then success",
			replies: func(t *testing.T) []reply {
				return []reply{jsonError(429, "slow down", "", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}), llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waits: []time.Duration{1500 * time.Millisecond},
		},
		{
			name: "500 twice, then success, with growing jittered back-off",
			replies: func(t *testing.T) []reply {
				return []reply{jsonError(500, "The server had an error", "", nil), jsonError(502, "Bad gateway", "", nil), llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 3,
			waitsIn: [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}, {500 * time.Millisecond, time.Second}},
		},
		{
			name: "503 with an HTML page until the attempts run out",
			cfg:  Config{Options: provider.Options{MaxAttempts: 3}},
			replies: func(*testing.T) []reply {
				page := reply{Status: 503, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html><body>503 Service Temporarily Unavailable</body></html>"}
				return []reply{page, page, page}
			},
			requests: 3, waitsIn: [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}, {500 * time.Millisecond, time.Second}},
			err: ErrUnavailable, errHas: []string{"HTTP 503", "Service Unavailable", "gave up after 3 attempts"},
		},
		{
			name: "400 is not retried and names the provider's message",
			replies: func(*testing.T) []reply {
				return []reply{jsonError(400, "This model's maximum context length is 128000 tokens.", "context_length_exceeded", nil)}
			},
			requests: 1, err: provider.ErrContextTooLong,
			errHas: []string{"HTTP 400", "maximum context length is 128000 tokens", "context_length_exceeded"},
		},
		{
			name: "404 of a compatible server with a plain error string",
			replies: func(*testing.T) []reply {
				return []reply{{Status: 404, Body: `{"error":"model \"llama9\" not found, try pulling it first"}`}}
			},
			requests: 1, err: ErrBadRequest, errHas: []string{`model "llama9" not found`},
		},
		{
			name: "401 is ErrAuth, and the key the server echoes is removed",
			replies: func(*testing.T) []reply {
				return []reply{jsonError(401, "Incorrect API key provided: "+testKey+". You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_api_key", nil)}
			},
			requests: 1, err: ErrAuth, errHas: []string{"HTTP 401", "Incorrect API key provided: [redacted]."},
		},
		{
			name: "403 is ErrAuth",
			replies: func(*testing.T) []reply {
				return []reply{jsonError(403, "Project does not have access to model gpt-test", "model_not_found", nil)}
			},
			requests: 1, err: ErrAuth, errHas: []string{"does not have access"},
		},
		{
			name: "429 for an exhausted quota is not retried",
			replies: func(*testing.T) []reply {
				return []reply{jsonError(429, "You exceeded your current quota.", "insufficient_quota", nil)}
			},
			requests: 1, err: ErrRateLimited, errHas: []string{"exceeded your current quota"},
		},
		{
			name: "a Retry-After beyond MaxWait ends the retries",
			cfg:  Config{Options: provider.Options{MaxWait: 10 * time.Second}},
			replies: func(*testing.T) []reply {
				return []reply{jsonError(429, "slow down", "", map[string]string{"Retry-After": "3600"})}
			},
			requests: 1, err: ErrRateLimited, errHas: []string{"retry after 1h0m0s, longer than max_wait 10s"},
		},
		{
			name: "a wait past the context's deadline ends the retries",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 30*time.Second)
			},
			replies: func(*testing.T) []reply {
				return []reply{jsonError(429, "slow down", "", map[string]string{"Retry-After": "45"})}
			},
			requests: 1, err: ErrRateLimited, errHas: []string{"no time left to retry"},
		},
		{
			name: "a stream cut before any part of the answer, its arguments streaming, is retried from the start",
			replies: func(t *testing.T) []reply {
				return []reply{llmtest.CutStream(t, "tool_call.sse", 4), llmtest.Streamed(t, "tool_call.sse")}
			},
			want: []llm.Part{
				weather(`{"`), weather("location"), weather(`":"`), // progress of the cut attempt
				weather(`{"`), weather("location"), weather(`":"`), weather("Paris"), weather(", France"), weather(`"}`),
				llmtest.CallPart("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", `{"location":"Paris, France"}`),
				usagePart(81, 17), finishPart(llm.FinishToolCalls),
			},
			requests: 2, waitsIn: [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}},
		},
		{
			name: "a stream cut after parts were yielded is an error",
			replies: func(t *testing.T) []reply {
				return []reply{llmtest.CutStream(t, "text.sse", 2), llmtest.Streamed(t, "text.sse")}
			},
			want:     []llm.Part{llmtest.TextPart("Hello")},
			requests: 1, err: ErrUnavailable, errHas: []string{"the stream was cut", "not retried: part of the answer was already delivered"},
		},
		{
			name: "a stream ending cleanly without a finish reason counts as cut",
			replies: func(t *testing.T) []reply {
				roleOnly := reply{Status: 200, Body: `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}` + "\n\n"}
				return []reply{roleOnly, llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waitsIn: [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}},
		},
		{
			name:     "a cut after the finish reason keeps the answer",
			replies:  func(t *testing.T) []reply { return []reply{llmtest.CutStream(t, "text.sse", 5)} },
			want:     []llm.Part{llmtest.TextPart("Hello"), llmtest.TextPart(", world"), llmtest.TextPart("! How can I help?"), finishPart(llm.FinishStop)},
			requests: 1,
		},
		{
			name: "a chunk that is not JSON, before any part, is retried",
			replies: func(t *testing.T) []reply {
				return []reply{{Status: 200, Body: "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\n\ndata: [DONE]\n\n"}, llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waitsIn: [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}},
		},
		{
			name: "an error event in the stream is retried",
			replies: func(t *testing.T) []reply {
				return []reply{chunks(`{"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}`), llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waitsIn: [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}},
		},
		{
			name: "an error event with a 4xx code is not retried",
			replies: func(*testing.T) []reply {
				return []reply{chunks(`{"error":{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}}`)}
			},
			requests: 1, err: ErrBadRequest, errHas: []string{"max_tokens is too large"},
		},
		{
			name: "a server that words OpenAI's message without its code is too long too (vLLM)",
			replies: func(*testing.T) []reply {
				return []reply{chunks(`{"error":{"object":"error","message":"This model's maximum context length is 131072 tokens. However, you requested 351430 tokens. Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}}`)}
			},
			requests: 1, err: provider.ErrContextTooLong, errHas: []string{"maximum context length is 131072 tokens"},
		},
		{
			name: "MaxAttempts 1 disables retries",
			cfg:  Config{Options: provider.Options{MaxAttempts: 1}},
			replies: func(t *testing.T) []reply {
				return []reply{jsonError(500, "boom", "", nil), llmtest.Streamed(t, "text.sse")}
			},
			requests: 1, err: ErrUnavailable, errHas: []string{"boom"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.cfg, tt.replies(t)...)
			ctx, cancel := context.WithCancel(context.Background())
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()

			got, err := llmtest.Drain(t, ctx, b.client, llmtest.UserRequest("hi"))
			t.Logf("err: %v", err)
			if tt.err == nil && err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want one wrapping %v", err, tt.err)
				}
				if tt.err != provider.ErrContextTooLong && errors.Is(err, provider.ErrContextTooLong) {
					t.Errorf("err = %v: marked as too long for the context window", err)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("err = %q, want it to contain %q", err, s)
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
			waits := b.waits()
			if tt.waits != nil {
				if diff := cmp.Diff(tt.waits, waits); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
			} else if len(waits) != len(tt.waitsIn) {
				t.Errorf("waits = %v, want %d within %v", waits, len(tt.waitsIn), tt.waitsIn)
			} else {
				for i, w := range waits {
					if w < tt.waitsIn[i][0] || w > tt.waitsIn[i][1] {
						t.Errorf("wait %d = %s, want within %v", i, w, tt.waitsIn[i])
					}
				}
			}
		})
	}
}

// TestRetryLogs checks that a retry is logged, with neither key nor payload.
func TestRetryLogs(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{}, jsonError(429, "key "+testKey+" is rate limited", "", map[string]string{"Retry-After": "1"}), llmtest.Streamed(t, "text.sse"))
	if _, err := llmtest.Drain(t, context.Background(), b.client, llmtest.UserRequest("a secret user message")); err != nil {
		t.Fatal(err)
	}
	entries := b.logs.FilterMessage("model call failed; retrying").All()
	if len(entries) != 1 {
		t.Fatalf("%d retry log lines, want 1: %v", len(entries), b.logs.All())
	}
	line := toString(entries[0].ContextMap())
	if !strings.Contains(line, "[redacted]") || strings.Contains(line, "a secret user message") {
		t.Errorf("log line = %s", line)
	}
	// noKey runs at cleanup.
}

// TestConnectionRefused checks that connection errors are retried and then
// reported as ErrUnavailable.
func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()

	var waits []time.Duration
	c, err := New(Config{
		BaseURL: url + "/v1",
		Model:   "m",
		Options: provider.Options{MaxAttempts: 2, HTTPClient: &http.Client{Transport: &http.Transport{}}, Sleep: func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			return nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = llmtest.Drain(t, context.Background(), c, llmtest.UserRequest("hi"))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "the connection failed") {
		t.Fatalf("err = %v, want ErrUnavailable for a failed connection", err)
	}
	if len(waits) != 1 {
		t.Errorf("waits = %v, want one", waits)
	}
}

// TestCancel checks that a cancelled context ends a call promptly, while
// streaming and while waiting to retry.
func TestCancel(t *testing.T) {
	t.Parallel()

	t.Run("mid-stream", func(t *testing.T) {
		t.Parallel()
		open := reply{Status: 200, Hold: true, Body: `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Thinking"},"finish_reason":null}]}` + "\n\n"}
		b := setup(t, Config{}, open)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		done := make(chan error, 1)
		var got []llm.Part
		go func() {
			for p, err := range b.client.Generate(ctx, llmtest.UserRequest("hi")) {
				if err != nil {
					done <- err
					return
				}
				got = append(got, p)
				cancel() // the server keeps the stream open; only cancelling ends it
			}
			done <- nil
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		case <-time.After(30 * time.Second): // a guard against hanging, not a timing assertion
			t.Fatal("Generate did not return after its context was cancelled")
		}
		if diff := cmp.Diff([]llm.Part{llmtest.TextPart("Thinking")}, got); diff != "" {
			t.Errorf("parts (-want +got):\n%s", diff)
		}
	})

	t.Run("during back-off", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := setup(t, Config{
			Options: provider.Options{Sleep: func(ctx context.Context, d time.Duration) error {
				cancel() // the turn is stopped while we wait
				<-ctx.Done()
				return ctx.Err()
			}},
		}, jsonError(503, "overloaded", "", nil), llmtest.Streamed(t, "text.sse"))
		_, err := llmtest.Drain(t, ctx, b.client, llmtest.UserRequest("hi"))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if n := len(b.fake.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})

	t.Run("before the call", func(t *testing.T) {
		t.Parallel()
		b := setup(t, Config{}, llmtest.Streamed(t, "text.sse"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := llmtest.Drain(t, ctx, b.client, llmtest.UserRequest("hi"))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}
