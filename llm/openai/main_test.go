package openai

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/engine-brain/brain/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testKey is the API key of every test client. No error or log line may
// contain it.
const testKey = "sk-test-8f3a1c0d5e7b4a2f9c6d"

// reply is one answer of the fake server.
type reply struct {
	status int
	header map[string]string
	body   string
	// cutAfter, when > 0, sends only that many bytes of body and then drops
	// the connection (the response declares the whole length).
	cutAfter int
	// hold, when set, sends body and then keeps the stream open until the
	// request is cancelled.
	hold bool
}

// sse is a 200 reply streaming a testdata file.
func sse(t *testing.T, name string) reply {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: http.StatusOK, body: string(b)}
}

// chunks is a 200 reply streaming the given data payloads, then [DONE].
func chunks(data ...string) reply {
	var sb strings.Builder
	for _, d := range data {
		sb.WriteString("data: " + d + "\n\n")
	}
	sb.WriteString("data: [DONE]\n\n")
	return reply{status: http.StatusOK, body: sb.String()}
}

// jsonError is an error reply with an OpenAI error body.
func jsonError(status int, message, code string, header map[string]string) reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": "invalid_request_error", "param": nil, "code": code,
	}})
	return reply{status: status, header: header, body: string(b)}
}

// received is one request the fake server got.
type received struct {
	path   string
	header http.Header
	body   []byte
}

// fake is an OpenAI-compatible server playing replies in order, to Chat
// Completions and Responses API requests alike; past the last it answers
// 500.
type fake struct {
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	got     []received
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.got)
	f.got = append(f.got, received{path: r.URL.Path, header: r.Header.Clone(), body: body})
	rep := reply{status: http.StatusInternalServerError, body: `{"error":{"message":"no more replies"}}`}
	if n < len(f.replies) {
		rep = f.replies[n]
	}
	f.mu.Unlock()

	if r.Method != http.MethodPost || (r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/v1/responses") {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.status == http.StatusOK {
		w.Header().Set("Content-Type", "text/event-stream")
	} else if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	if rep.cutAfter > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(rep.body)))
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body[:rep.cutAfter])
		return // short of Content-Length: the server drops the connection
	}
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
	if rep.hold {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// requests returns what the server received.
func (f *fake) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

// bundle is a client wired to a fake server.
type bundle struct {
	fake   *fake
	client *Client
	logs   *observer.ObservedLogs
	// waits records every back-off the client asked for.
	waits *[]time.Duration
}

// setup starts a fake server playing replies and a client for it whose
// sleeps return at once (recorded in waits). cfg fields set by the caller
// are kept.
func setup(t *testing.T, cfg Config, replies ...reply) bundle {
	t.Helper()
	f := &fake{replies: replies}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)

	core, logs := observer.New(zap.DebugLevel)
	var mu sync.Mutex
	waits := new([]time.Duration)
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	cfg.BaseURL = f.srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "gpt-test"
	}
	cfg.HTTPClient = f.srv.Client()
	cfg.Logger = zap.New(core)
	if cfg.Sleep == nil {
		cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			*waits = append(*waits, d)
			mu.Unlock()
			return ctx.Err()
		}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { llmtest.NoKeyInLogs(t, logs, testKey) })
	return bundle{fake: f, client: c, logs: logs, waits: waits}
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
