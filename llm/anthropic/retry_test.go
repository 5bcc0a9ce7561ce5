package anthropic

import (
	"context"
	"errors"
	"net/http"
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
	okText := []llm.Part{llmtest.TextPart("Hello"), llmtest.TextPart(", world"), llmtest.TextPart("! How can I help?"), usagePart(25, 12), finishPart(llm.FinishStop)}
	firstWait := [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}}
	paris := func(args string) llm.Part { // the first call of two_tool_uses.sse
		return llmtest.ArgsPart("toolu_01A09q90qw90lq917835lq9", "get_weather", args)
	}
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
			name: "529 overloaded, then success, with jittered back-off",
			replies: func(t *testing.T) []reply {
				return []reply{errorReply(529, "overloaded_error", "Overloaded", nil), llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waitsIn: firstWait,
		},
		{
			name: "529 until the attempts run out names overloaded",
			cfg:  Config{Options: provider.Options{MaxAttempts: 2}},
			replies: func(*testing.T) []reply {
				o := errorReply(529, "overloaded_error", "Overloaded", nil)
				return []reply{o, o}
			},
			requests: 2, waitsIn: firstWait, err: ErrUnavailable,
			errHas: []string{"HTTP 529", "Overloaded", "overloaded_error", "gave up after 2 attempts"},
		},
		{
			name: "429 with Retry-After as an HTTP date, then success",
			cfg:  Config{Options: provider.Options{Now: func() time.Time { return epoch }}},
			replies: func(t *testing.T) []reply {
				date := epoch.Add(30 * time.Second).Format(http.TimeFormat)
				return []reply{errorReply(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", map[string]string{"Retry-After": date}), llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waits: []time.Duration{30 * time.Second},
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
				return []reply{errorReply(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", nil)}
			},
			requests: 1, err: provider.ErrContextTooLong,
			errHas: []string{"HTTP 400", "prompt is too long", "invalid_request_error"},
		},
		{
			name: "401 is ErrAuth, and the key the server echoes is removed",
			replies: func(*testing.T) []reply {
				return []reply{errorReply(401, "authentication_error", "invalid x-api-key "+testKey, nil)}
			},
			requests: 1, err: ErrAuth, errHas: []string{"authentication failed (HTTP 401)", "invalid x-api-key [redacted]"},
		},
		{
			name: "403 is ErrAuth",
			replies: func(*testing.T) []reply {
				return []reply{errorReply(403, "permission_error", "Your API key does not have permission", nil)}
			},
			requests: 1, err: ErrAuth, errHas: []string{"HTTP 403", "permission_error"},
		},
		{
			name: "a Retry-After beyond MaxWait ends the retries",
			cfg:  Config{Options: provider.Options{MaxWait: 10 * time.Second}},
			replies: func(*testing.T) []reply {
				return []reply{errorReply(429, "rate_limit_error", "slow down", map[string]string{"Retry-After": "60"})}
			},
			requests: 1, err: ErrRateLimited, errHas: []string{"retry after 1m0s, longer than max_wait 10s"},
		},
		{
			name: "a wait past the context's deadline ends the retries",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 30*time.Second)
			},
			replies: func(*testing.T) []reply {
				return []reply{errorReply(429, "rate_limit_error", "slow down", map[string]string{"Retry-After": "45"})}
			},
			requests: 1, err: ErrRateLimited, errHas: []string{"no time left to retry"},
		},
		{
			name: "a stream cut before any part of the answer, its input streaming, is retried from the start",
			replies: func(t *testing.T) []reply {
				return []reply{llmtest.CutStream(t, "two_tool_uses.sse", 5), llmtest.Streamed(t, "two_tool_uses.sse")}
			},
			want: []llm.Part{
				paris(`{"location": `), paris(`"Paris"}`), // progress of the cut attempt
				paris(`{"location": `), paris(`"Paris"}`),
				llmtest.ArgsPart("toolu_01B8Rr2m4hLk7dQpZs3xYv1N", "get_time", `{"timezone"`),
				llmtest.ArgsPart("toolu_01B8Rr2m4hLk7dQpZs3xYv1N", "get_time", `: "Europe/Paris"}`),
				llmtest.CallPart("toolu_01A09q90qw90lq917835lq9", "get_weather", `{"location": "Paris"}`),
				llmtest.CallPart("toolu_01B8Rr2m4hLk7dQpZs3xYv1N", "get_time", `{"timezone": "Europe/Paris"}`),
				usagePart(610, 104), finishPart(llm.FinishToolCalls),
			},
			requests: 2, waitsIn: firstWait,
		},
		{
			name: "a stream cut after parts were yielded is an error",
			replies: func(t *testing.T) []reply {
				return []reply{llmtest.CutStream(t, "text.sse", 4), llmtest.Streamed(t, "text.sse")}
			},
			want:     []llm.Part{llmtest.TextPart("Hello")},
			requests: 1, err: ErrUnavailable, errHas: []string{"the stream was cut", "not retried: part of the answer was already delivered"},
		},
		{
			name:     "a cut after message_delta keeps the answer",
			replies:  func(t *testing.T) []reply { return []reply{llmtest.CutStream(t, "text.sse", 8)} },
			want:     okText,
			requests: 1,
		},
		{
			name: "a stream ending cleanly without a stop reason counts as cut",
			replies: func(t *testing.T) []reply {
				startOnly := events(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":1,"output_tokens":1}}}`)
				return []reply{startOnly, llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waitsIn: firstWait,
		},
		{
			name: "an overloaded error event in the stream is retried",
			replies: func(t *testing.T) []reply {
				return []reply{
					{Status: 200, Body: "event: error\ndata: " + apiError("overloaded_error", "Overloaded") + "\n\n"},
					llmtest.Streamed(t, "text.sse"),
				}
			},
			want: okText, requests: 2, waitsIn: firstWait,
		},
		{
			name: "an error event for a prompt too long is not retried, and says so",
			replies: func(*testing.T) []reply {
				return []reply{{Status: 200, Body: "event: error\ndata: " + apiError("invalid_request_error", "prompt is too long: 208656 tokens > 200000 maximum") + "\n\n"}}
			},
			requests: 1, err: provider.ErrContextTooLong, errHas: []string{"error event in the stream: prompt is too long"},
		},
		{
			name: "an invalid_request_error event is not retried",
			replies: func(t *testing.T) []reply {
				return []reply{{Status: 200, Body: "event: error\ndata: " + apiError("invalid_request_error", "messages: roles must alternate") + "\n\n"}}
			},
			requests: 1, err: ErrBadRequest, errHas: []string{"error event in the stream: messages: roles must alternate", "invalid_request_error"},
		},
		{
			name: "MaxAttempts 1 disables retries",
			cfg:  Config{Options: provider.Options{MaxAttempts: 1}},
			replies: func(*testing.T) []reply {
				return []reply{errorReply(500, "api_error", "Internal server error", nil)}
			},
			requests: 1, err: ErrUnavailable, errHas: []string{"HTTP 500", "Internal server error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.cfg, tt.replies(t)...)
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			got, err := llmtest.Drain(t, ctx, b.client, llmtest.UserRequest("hi"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			switch {
			case tt.err == nil && err != nil:
				t.Fatalf("Generate: %v", err)
			case tt.err != nil && !errors.Is(err, tt.err):
				t.Fatalf("error %v, want one wrapping %v", err, tt.err)
			case tt.err != nil && tt.err != provider.ErrContextTooLong && errors.Is(err, provider.ErrContextTooLong):
				t.Errorf("error %v: marked as too long for the context window", err)
			}
			if err != nil {
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error %q carries the API key", err)
				}
			}
			if n := len(b.fake.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			waits := b.waits()
			if tt.waits != nil {
				if diff := cmp.Diff(tt.waits, waits); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
			}
			if tt.waitsIn != nil {
				if len(waits) != len(tt.waitsIn) {
					t.Fatalf("waits %v, want %d in %v", waits, len(tt.waitsIn), tt.waitsIn)
				}
				for i, w := range waits {
					if w < tt.waitsIn[i][0] || w > tt.waitsIn[i][1] {
						t.Errorf("wait %d = %s, want in [%s, %s]", i, w, tt.waitsIn[i][0], tt.waitsIn[i][1])
					}
				}
			}
		})
	}
}

// TestRetryCancelled checks that cancelling the call during a back-off
// ends it with the context's error.
func TestRetryCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := setup(t, Config{
		Options: provider.Options{Sleep: func(ctx context.Context, _ time.Duration) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		}},
	}, errorReply(529, "overloaded_error", "Overloaded", nil), llmtest.Streamed(t, "text.sse"))
	_, err := llmtest.Drain(t, ctx, b.client, llmtest.UserRequest("hi"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := len(b.fake.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
