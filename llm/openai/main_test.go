package openai

import (
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
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

// reply is one answer of the fake server; received, a request it got.
type (
	reply    = llmtest.Reply
	received = llmtest.Received
)

// chunks is a 200 reply streaming the given data payloads, then [DONE].
func chunks(data ...string) reply {
	var sb strings.Builder
	for _, d := range data {
		sb.WriteString("data: " + d + "\n\n")
	}
	sb.WriteString("data: [DONE]\n\n")
	return reply{Status: http.StatusOK, Body: sb.String()}
}

// jsonError is an error reply with an OpenAI error body.
func jsonError(status int, message, code string, header map[string]string) reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": "invalid_request_error", "param": nil, "code": code,
	}})
	return reply{Status: status, Header: header, Body: string(b)}
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
	f := &llmtest.Replayer{Paths: []string{"/v1/chat/completions", "/v1/responses"}, Replies: replies, Exhausted: reply{Status: http.StatusInternalServerError, Body: `{"error":{"message":"no more replies"}}`}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)

	core, logs := observer.New(zap.DebugLevel)
	waits := &llmtest.Waits{}
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "gpt-test"
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

func toString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
