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
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses") {
		f.serveResponses(w, r)
		return
	}
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

// Fake web search of serveResponses.
const (
	fakeSearchQuery = "answer to everything"
	fakeSourceURL   = "https://example.org/42"
	fakeSourceTitle = "On the number 42"
	fakeCitedText   = "The answer is 42."
)

// serveResponses answers a Responses API request (the adapter's path when
// a recipe asks for hosted tools) in that API's event stream: a hosted web
// search, text citing its source, then a respond call with the fake's
// answer, and the usage.
func (f *fakeOpenAI) serveResponses(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: chatRequest{Model: req.Model, Stream: true}})
	f.mu.Unlock()

	args, _ := json.Marshal(map[string]any{"message": f.answer, "awaiting_user_input": true})
	quoted := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	search := `{"id":"ws_fake1","type":"web_search_call","status":"%s","action":{"type":"search","query":"` + fakeSearchQuery + `"}}`
	note := `{"type":"url_citation","url":"` + fakeSourceURL + `","title":"` + fakeSourceTitle + `","start_index":0,"end_index":` + fmt.Sprint(len(fakeCitedText)) + `}`
	message := `{"id":"msg_fake1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + quoted(fakeCitedText) + `,"annotations":[` + note + `]}]}`
	call := `{"id":"fc_fake1","type":"function_call","status":"completed","call_id":"call_fake1","name":"respond","arguments":` + quoted(string(args)) + `}`
	events := []string{
		`{"type":"response.created","response":{"id":"resp_fake1","object":"response","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":` + fmt.Sprintf(search, "in_progress") + `}`,
		`{"type":"response.web_search_call.in_progress","output_index":0,"item_id":"ws_fake1"}`,
		`{"type":"response.web_search_call.completed","output_index":0,"item_id":"ws_fake1"}`,
		`{"type":"response.output_item.done","output_index":0,"item":` + fmt.Sprintf(search, "completed") + `}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_fake1","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","item_id":"msg_fake1","output_index":1,"content_index":0,"delta":` + quoted(fakeCitedText) + `}`,
		`{"type":"response.output_text.annotation.added","item_id":"msg_fake1","output_index":1,"content_index":0,"annotation_index":0,"annotation":` + note + `}`,
		`{"type":"response.output_item.done","output_index":1,"item":` + message + `}`,
		`{"type":"response.output_item.added","output_index":2,"item":` + strings.Replace(call, `"completed"`, `"in_progress"`, 1) + `}`,
		`{"type":"response.function_call_arguments.done","item_id":"fc_fake1","output_index":2,"arguments":` + quoted(string(args)) + `}`,
		`{"type":"response.output_item.done","output_index":2,"item":` + call + `}`,
		`{"type":"response.completed","response":{"id":"resp_fake1","object":"response","status":"completed","output":[` + fmt.Sprintf(search, "completed") + `,` + message + `,` + call + `],"usage":{"input_tokens":300,"output_tokens":40,"total_tokens":340}}}`,
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		var typ struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &typ)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, e)
	}
}
