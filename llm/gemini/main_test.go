package gemini

import (
	"encoding/json"
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
	// The SDK imports cloud.google.com/go/auth, whose opencensus dependency
	// starts a worker in an init function: not ours, and never ending.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// testKey is the API key of every test client. No error or log line may
// contain it.
const testKey = "AIzaSyTest-4f8c2a9e7d1b3605"

// testModel is the default model of test clients, and streamPath the path
// they post to.
const (
	testModel  = "gemini-test"
	streamPath = "/v1beta/models/" + testModel + ":streamGenerateContent"
)

// reply is one answer of the fake server; received, a request it got.
type (
	reply    = llmtest.Reply
	received = llmtest.Received
)

// chunks is a 200 reply streaming the given GenerateContentResponse JSON
// values, one data line each.
func chunks(data ...string) reply {
	var sb strings.Builder
	for _, d := range data {
		sb.WriteString("data: " + d + "\r\n\r\n")
	}
	return reply{Status: http.StatusOK, Body: sb.String()}
}

// apiError is an error body in Google's format, with an ErrorInfo reason
// when reason is set.
func apiError(code int, status, message, reason string) string {
	e := map[string]any{"code": code, "message": message, "status": status}
	if reason != "" {
		e["details"] = []any{map[string]any{
			"@type":    "type.googleapis.com/google.rpc.ErrorInfo",
			"reason":   reason,
			"domain":   "googleapis.com",
			"metadata": map[string]string{"service": "generativelanguage.googleapis.com"},
		}}
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return string(b)
}

// statusOf is the Google status of an HTTP code, as the API sends it.
func statusOf(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}

// errorReply is an error reply with a Google error body.
func errorReply(code int, message string, header map[string]string) reply {
	return reply{Status: code, Header: header, Body: apiError(code, statusOf(code), message, "")}
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
	f := &llmtest.Replayer{Paths: []string{streamPath}, Replies: replies, Exhausted: errorReply(http.StatusInternalServerError, "no more replies", nil), ErrorContentType: "application/json; charset=UTF-8"}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)

	core, logs := observer.New(zap.DebugLevel)
	waits := &llmtest.Waits{}
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	cfg.BaseURL = srv.URL
	if cfg.Model == "" {
		cfg.Model = testModel
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

// sigPayload is the payload of a thought signature, as base64 on the wire,
// made under the v1beta contract.
func sigPayload(b64 string) *conversation.ProviderPayload {
	return &conversation.ProviderPayload{Provider: "gemini", Format: "thought_signature", Version: "v1beta", Value: json.RawMessage(`"` + b64 + `"`)}
}

func callPart(id, name, args string, sig string) llm.Part {
	c := &conversation.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
	if sig != "" {
		c.Payload = sigPayload(sig)
	}
	return llm.Part{Kind: llm.PartToolCall, ToolCall: c}
}

func usagePart(in, out int) llm.Part {
	return llm.Part{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: in, OutputTokens: out}}
}

func finishPart(f llm.FinishReason) llm.Part { return llm.Part{Kind: llm.PartFinish, Finish: f} }

func reasoningPart(text, sig string) llm.Part {
	r := &conversation.Reasoning{Text: text}
	if sig != "" {
		r.Payload = sigPayload(sig)
	}
	return llm.Part{Kind: llm.PartReasoning, Reasoning: r}
}
