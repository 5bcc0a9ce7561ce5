package main

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
	Path string
	Auth string // the Authorization header
	Body chatRequest
}

// chatRequest is the part of a Chat Completions request the tests check.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"` // a string, or a list of parts
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// text returns the content of the message of role, joined, in order.
func (r chatRequest) text(role string) string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == role {
			if s, ok := m.Content.(string); ok {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// toolNames returns the names of the request's function tools.
func (r chatRequest) toolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Function.Name)
	}
	return names
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
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad JSON","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: req})
	f.mu.Unlock()

	args, _ := json.Marshal(map[string]any{"message": f.answer, "awaiting_user_input": true})
	half := len(args) / 2
	chunk := func(delta, finish, usage string) string {
		return fmt.Sprintf(`{"id":"chatcmpl-fake1","object":"chat.completion.chunk","created":1767225600,"model":%q,"choices":[%s],"usage":%s}`,
			req.Model, choice(delta, finish), usage)
	}
	deltaArgs := func(s string) string {
		q, _ := json.Marshal(s)
		return fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%s}}]}`, q)
	}
	events := []string{
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_fake1","type":"function","function":{"name":"respond","arguments":""}}]}`, "null", "null"),
		chunk(deltaArgs(string(args[:half])), "null", "null"),
		chunk(deltaArgs(string(args[half:])), "null", "null"),
		chunk(`{}`, `"tool_calls"`, "null"),
		fmt.Sprintf(`{"id":"chatcmpl-fake1","object":"chat.completion.chunk","created":1767225600,"model":%q,"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":20,"total_tokens":140}}`, req.Model),
		"[DONE]",
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

// choice is the one choice of a chunk; finish is JSON (null or a string).
func choice(delta, finish string) string {
	return fmt.Sprintf(`{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}`, delta, finish)
}

// received returns the requests so far.
func (f *fakeOpenAI) received() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}
