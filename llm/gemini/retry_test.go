package gemini

import (
	"context"
	"encoding/json"
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

// rateLimited is a 429 as Gemini sends it: RESOURCE_EXHAUSTED with the
// quota that ran out and a RetryInfo delay.
func rateLimited(delay string) reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": 429, "status": "RESOURCE_EXHAUSTED",
		"message": "You exceeded your current quota, please check your plan and billing details.",
		"details": []any{
			map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
				"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				"quotaId":     "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
			}}},
			map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
		},
	}})
	return reply{Status: 429, Body: string(b)}
}

// TestRetries covers which failures are retried, how long the client waits,
// and what error ends a call.
func TestRetries(t *testing.T) {
	t.Parallel()
	okText := []llm.Part{llmtest.TextPart("Hello"), llmtest.TextPart(", world! How can"), llmtest.TextPart(" I help?"), usagePart(9, 21), finishPart(llm.FinishStop)}
	firstWait := [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}}
	overloaded := errorReply(503, "The model is overloaded. Please try again later.", nil)
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
			name:    "503 overloaded, then success, with jittered back-off",
			replies: func(t *testing.T) []reply { return []reply{overloaded, llmtest.Streamed(t, "text.sse")} },
			want:    okText, requests: 2, waitsIn: firstWait,
		},
		{
			name:     "503 until the attempts run out names overloaded",
			cfg:      Config{Options: provider.Options{MaxAttempts: 2}},
			replies:  func(*testing.T) []reply { return []reply{overloaded, overloaded} },
			requests: 2, waitsIn: firstWait, err: ErrUnavailable,
			errHas: []string{"HTTP 503", "The model is overloaded", "UNAVAILABLE", "gave up after 2 attempts"},
		},
		{
			name:     "429 waits the retryDelay of Google's RetryInfo",
			replies:  func(t *testing.T) []reply { return []reply{rateLimited("37s"), llmtest.Streamed(t, "text.sse")} },
			want:     okText,
			requests: 2, waits: []time.Duration{37 * time.Second},
		},
		{
			name: "429 with Retry-After as an HTTP date: the header wins",
			cfg:  Config{Options: provider.Options{Now: func() time.Time { return epoch }}},
			replies: func(t *testing.T) []reply {
				r := rateLimited("50s")
				r.Header = map[string]string{"Retry-After": epoch.Add(30 * time.Second).Format(http.TimeFormat)}
				return []reply{r, llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waits: []time.Duration{30 * time.Second},
		},
		{
			name:     "a retryDelay beyond MaxWait ends the retries",
			cfg:      Config{Options: provider.Options{MaxWait: 10 * time.Second}},
			replies:  func(*testing.T) []reply { return []reply{rateLimited("58.5s")} },
			requests: 1, err: ErrRateLimited, errHas: []string{"HTTP 429", "exceeded your current quota", "RESOURCE_EXHAUSTED", "retry after 59s, longer than max_wait 10s"},
		},
		{
			name: "a wait past the context's deadline ends the retries",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 30*time.Second)
			},
			replies:  func(*testing.T) []reply { return []reply{rateLimited("45s")} },
			requests: 1, err: ErrRateLimited, errHas: []string{"no time left to retry"},
		},
		{
			name: "502 with an HTML page until the attempts run out",
			cfg:  Config{Options: provider.Options{MaxAttempts: 3}},
			replies: func(*testing.T) []reply {
				page := reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html><body>502 Bad Gateway</body></html>"}
				return []reply{page, page, page}
			},
			requests: 3, waitsIn: [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}, {500 * time.Millisecond, time.Second}},
			err: ErrUnavailable, errHas: []string{"HTTP 502", "Bad Gateway", "gave up after 3 attempts"},
		},
		{
			name: "400 is not retried and names the provider's message",
			replies: func(*testing.T) []reply {
				return []reply{errorReply(400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", nil)}
			},
			requests: 1, err: provider.ErrContextTooLong,
			errHas: []string{"request refused (HTTP 400)", "exceeds the maximum number of tokens", "INVALID_ARGUMENT"},
		},
		{
			name: "400 API_KEY_INVALID is ErrAuth",
			replies: func(*testing.T) []reply {
				return []reply{{Status: 400, Body: apiError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "API_KEY_INVALID")}}
			},
			requests: 1, err: ErrAuth, errHas: []string{"authentication failed (HTTP 400)", "API key not valid", "API_KEY_INVALID"},
		},
		{
			name: "403 is ErrAuth",
			replies: func(*testing.T) []reply {
				return []reply{errorReply(403, "Permission denied: Consumer has been suspended.", nil)}
			},
			requests: 1, err: ErrAuth, errHas: []string{"HTTP 403", "PERMISSION_DENIED"},
		},
		{
			name: "404 for an unknown model is not retried",
			replies: func(*testing.T) []reply {
				return []reply{errorReply(404, "models/gemini-test is not found for API version v1beta", nil)}
			},
			requests: 1, err: ErrBadRequest, errHas: []string{"HTTP 404", "is not found", "NOT_FOUND"},
		},
		{
			name: "a stream of calls cut before any part is retried from the start",
			replies: func(t *testing.T) []reply {
				return []reply{llmtest.CutStream(t, "two_function_calls.sse", 1), llmtest.Streamed(t, "two_function_calls.sse")}
			},
			want: []llm.Part{
				callPart("call_pEJmaY3VG5G1nsEPzsTgmQ4_0", "get_weather", `{"location":"Paris"}`, sigTwoCalls),
				callPart("call_pEJmaY3VG5G1nsEPzsTgmQ4_1", "get_time", `{"timezone":"Europe/Paris"}`, ""),
				usagePart(140, 54), finishPart(llm.FinishToolCalls),
			},
			requests: 2, waitsIn: firstWait,
		},
		{
			name: "a stream cut after parts were yielded is an error",
			replies: func(t *testing.T) []reply {
				return []reply{llmtest.CutStream(t, "function_call.sse", 1), llmtest.Streamed(t, "function_call.sse")}
			},
			want:     []llm.Part{llmtest.TextPart("I'll check the weather")},
			requests: 1, err: ErrUnavailable, errHas: []string{"the stream was cut", "not retried: part of the answer was already delivered"},
		},
		{
			name: "a cut after the finish reason keeps the answer",
			replies: func(t *testing.T) []reply {
				body := llmtest.Recording(t, "text.sse")
				return []reply{{Status: 200, Body: body + "data: {\"candidates\": []}\r\n\r\n", CutAfter: len(body) + 8}}
			},
			want: okText, requests: 1,
		},
		{
			name: "a stream ending cleanly without a finish reason counts as cut",
			replies: func(t *testing.T) []reply {
				return []reply{chunks(`{"candidates": [],"usageMetadata": {"promptTokenCount": 9}}`), llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waitsIn: firstWait,
		},
		{
			name: "an UNAVAILABLE error object in the stream is retried",
			replies: func(t *testing.T) []reply {
				return []reply{chunks(apiError(503, "UNAVAILABLE", "The model is overloaded. Please try again later.", "")), llmtest.Streamed(t, "text.sse")}
			},
			want: okText, requests: 2, waitsIn: firstWait,
		},
		{
			name: "an error object in the stream for too many tokens is not retried, and says so",
			replies: func(*testing.T) []reply {
				return []reply{chunks(apiError(400, "INVALID_ARGUMENT", "The input token count (3475108) exceeds the maximum number of tokens allowed (1048576).", ""))}
			},
			requests: 1, err: provider.ErrContextTooLong, errHas: []string{"error in the stream: The input token count"},
		},
		{
			name: "an INVALID_ARGUMENT error object in the stream is not retried",
			replies: func(*testing.T) []reply {
				return []reply{chunks(apiError(400, "INVALID_ARGUMENT", "Please ensure that function call turn comes immediately after a user turn.", ""))}
			},
			requests: 1, err: ErrBadRequest, errHas: []string{"error in the stream: Please ensure that function call turn", "INVALID_ARGUMENT"},
		},
		{
			name:     "MaxAttempts 1 disables retries",
			cfg:      Config{Options: provider.Options{MaxAttempts: 1}},
			replies:  func(*testing.T) []reply { return []reply{errorReply(500, "An internal error has occurred.", nil)} },
			requests: 1, err: ErrUnavailable, errHas: []string{"HTTP 500", "An internal error has occurred"},
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

// TestKeyNeverInErrors checks that no error carries the API key, wherever
// the server echoes it: an error message, an error code, a stream's error
// object, a plain-text body. (setup's cleanup checks the logs.)
func TestKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	replies := []reply{
		{Status: 400, Body: apiError(400, "INVALID_ARGUMENT", "API key not valid: "+testKey, "API_KEY_INVALID")},
		{Status: 400, Body: apiError(400, "BAD_"+testKey, "bad", "")},
		{Status: 401, Body: apiError(401, "UNAUTHENTICATED", "key "+testKey+" revoked", "KEY_"+testKey)},
		chunks(apiError(403, "PERMISSION_DENIED", "key "+testKey+" lacks access", "")),
		{Status: 403, Header: map[string]string{"Content-Type": "text/plain"}, Body: "forbidden for key=" + testKey + "\n"},
		{Status: 500, Body: `{"error": "internal: ` + testKey + `"}`},
	}
	for i, r := range replies {
		b := setup(t, Config{Options: provider.Options{MaxAttempts: 1}}, r)
		_, err := llmtest.Drain(t, context.Background(), b.client, llmtest.UserRequest("hi"))
		if err == nil {
			t.Fatalf("reply %d: no error", i)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("reply %d: error %q carries the API key", i, err)
		}
		if !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("reply %d: error %q does not show where the key was removed", i, err)
		}
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
	}, errorReply(503, "The model is overloaded.", nil), llmtest.Streamed(t, "text.sse"))
	_, err := llmtest.Drain(t, ctx, b.client, llmtest.UserRequest("hi"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := len(b.fake.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
