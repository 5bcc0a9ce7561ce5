package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/provider"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		err  string // "" for a valid config
	}{
		{"OpenAI with a key", Config{APIKey: testKey}, ""},
		{"compatible server without a key", Config{BaseURL: "http://127.0.0.1:11434/v1"}, ""},
		{"OpenAI without a key", Config{}, "api_key is required for the OpenAI API"},
		{"relative base URL", Config{BaseURL: "localhost:8080/v1"}, "must be an absolute http or https URL"},
		{"other scheme", Config{BaseURL: "ftp://example.com/v1"}, "must be an absolute http or https URL"},
		{"query in base URL", Config{BaseURL: "http://example.com/v1?x=1"}, "no query or fragment"},
		{"unparsable base URL", Config{BaseURL: "http://[::1"}, "base_url is not a valid URL"},
		{"key with a newline", Config{APIKey: testKey + "\n"}, "white space or control characters"},
		{"negative attempts", Config{APIKey: testKey, Options: provider.Options{MaxAttempts: -1}}, "max_attempts must be between 1 and 20, or 0 for the default 4 (got -1)"},
		{"too many attempts", Config{APIKey: testKey, Options: provider.Options{MaxAttempts: 50}}, "(got 50)"},
		{"negative wait", Config{APIKey: testKey, Options: provider.Options{MaxWait: -1}}, "max_wait must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(tt.cfg)
			if tt.err == "" {
				if err != nil || c == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("New: err = %v, want it to contain %q", err, tt.err)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("the error carries the API key")
			}
		})
	}
}

// TestConfigRedactsBaseURLPassword checks that a password in the base URL
// stays out of errors.
func TestConfigRedactsBaseURLPassword(t *testing.T) {
	t.Parallel()
	_, err := New(Config{BaseURL: "ftp://user:hunter2@example.com/v1"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v, want an error without the password", err)
	}
}

// TestNoKeyNoAuthorization checks that a client without a key sends no
// Authorization header, and reads no OPENAI_* variable.
func TestNoKeyNoAuthorization(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(chunks(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`).Body))
	}))
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m", Options: provider.Options{HTTPClient: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := llmtest.Drain(t, context.Background(), c, llmtest.UserRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]llm.Part{llmtest.TextPart("ok"), finishPart(llm.FinishStop)}, got); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{""}, auth); diff != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", diff)
	}
}

// TestConcurrentUse runs calls of one client at once (meaningful with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	const n = 8
	replies := make([]reply, n)
	for i := range replies {
		replies[i] = llmtest.Streamed(t, "parallel_tool_calls.sse")
	}
	b := setup(t, Config{}, replies...)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			resp, err := llm.Collect(b.client.Generate(context.Background(), llmtest.UserRequest("hi")))
			if err == nil && len(resp.ToolCalls) != 2 {
				t.Errorf("%d tool calls, want 2", len(resp.ToolCalls))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
