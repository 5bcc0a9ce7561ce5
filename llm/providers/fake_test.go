package providers

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeOpenAI is an OpenAI-compatible server on loopback. Every Chat
// Completions request, at any path ending in /chat/completions, gets the
// same streamed answer in the protocol's SSE format: one respond call
// whose arguments arrive in two deltas, the finish reason, a usage chunk,
// then data: [DONE]. It records the requests.
type fakeOpenAI struct {
	*httptest.Server
	answer string

	mu       sync.Mutex
	requests []fakeRequest
}

// fakeRequest is a request the fake received.
type fakeRequest struct {
	Path  string
	Auth  string // the Authorization header
	Model string // the body's model
}

// newFakeOpenAI starts a fake whose model answers answer (plain text: it
// is written into JSON as it is).
func newFakeOpenAI(t *testing.T, answer string) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad JSON","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Model: req.Model})
	f.mu.Unlock()

	args, _ := json.Marshal(map[string]any{"message": f.answer, "awaiting_user_input": true})
	half := len(args) / 2
	chunk := func(delta, finish string) string {
		return fmt.Sprintf(`{"id":"chatcmpl-fake1","object":"chat.completion.chunk","created":1767225600,"model":%q,"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`,
			req.Model, delta, finish)
	}
	deltaArgs := func(s string) string {
		q, _ := json.Marshal(s)
		return fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%s}}]}`, q)
	}
	events := []string{
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_fake1","type":"function","function":{"name":"respond","arguments":""}}]}`, "null"),
		chunk(deltaArgs(string(args[:half])), "null"),
		chunk(deltaArgs(string(args[half:])), "null"),
		chunk(`{}`, `"tool_calls"`),
		fmt.Sprintf(`{"id":"chatcmpl-fake1","object":"chat.completion.chunk","created":1767225600,"model":%q,"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":20,"total_tokens":140}}`, req.Model),
		"[DONE]",
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
	}
}

// received returns the requests so far.
func (f *fakeOpenAI) received() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

// fakeGemini is a Gemini API server answering every streamGenerateContent
// call with one respond call whose message is answer; it records the key
// and path of each request.
type fakeGemini struct {
	*httptest.Server
	mu    sync.Mutex
	keys  []string
	paths []string
}

func newFakeGemini(t *testing.T, answer string) *fakeGemini {
	t.Helper()
	f := &fakeGemini{}
	args, _ := json.Marshal(map[string]string{"message": answer})
	chunk := `{"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "respond", "args": ` + string(args) + `}}]}, "finishReason": "STOP"}], "responseId": "r1"}`
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.keys = append(f.keys, r.Header.Get("x-goog-api-key"))
		f.paths = append(f.paths, r.URL.Path)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+chunk+"\r\n\r\n")
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeGemini) last() (key, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.keys) == 0 {
		return "", ""
	}
	return f.keys[len(f.keys)-1], f.paths[len(f.paths)-1]
}
