// Package openaitest is a fake OpenAI-compatible server for tests. It is a
// normal package so that the tests of several packages (cmd/brain,
// llm/providers) share one fake; only tests import it.
//
// Every Chat Completions request, at any path ending in /chat/completions,
// gets the same streamed answer in the protocol's SSE format: one respond
// call whose arguments arrive in two deltas, the finish reason, a usage
// chunk, then data: [DONE]. Every Responses API request, at any path ending
// in /responses, gets that API's event stream: a hosted web search for
// SearchQuery, CitedText citing SourceURL, then the same respond call, and
// the usage. Anything else is 404. The server records the requests.
package openaitest

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

// The fake web search of a Responses API answer: the query it searches
// for, the source it finds, and the text that cites it.
const (
	SearchQuery = "answer to everything"
	SourceURL   = "https://example.org/42"
	SourceTitle = "On the number 42"
	CitedText   = "The answer is 42."
)

// Server is the fake, on loopback; its URL is the embedded server's.
type Server struct {
	*httptest.Server
	answer string

	mu       sync.Mutex
	requests []Request
}

// Request is a request the fake received. For a Responses API request only
// Path, Auth and Model are read from it, and Stream is true.
type Request struct {
	Path     string    `json:"-"`
	Auth     string    `json:"-"` // the Authorization header
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools"`
}

// Message is a message of a Chat Completions request.
type Message struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a string, or a list of parts
}

// Tool is a tool of a Chat Completions request.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// Text returns the string contents of the messages of role, joined by
// newlines, in order.
func (r Request) Text(role string) string {
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

// ToolNames returns the names of the request's function tools.
func (r Request) ToolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Function.Name)
	}
	return names
}

// New starts a fake whose model answers answer, the message of its respond
// call, and closes it when t's test ends.
func New(t testing.TB, answer string) *Server {
	t.Helper()
	s := &Server{answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Received returns the requests so far, in order.
func (s *Server) Received() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

// respondArgs is the arguments JSON of the fake's respond call.
func (s *Server) respondArgs() []byte {
	args, _ := json.Marshal(map[string]any{"message": s.answer, "awaiting_user_input": true})
	return args
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses") {
		s.serveResponses(w, r)
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
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad JSON","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req.Path, req.Auth = r.URL.Path, r.Header.Get("Authorization")
	s.record(req)

	args := s.respondArgs()
	half := len(args) / 2
	chunk := func(delta, finish string) string {
		return fmt.Sprintf(`{"id":"chatcmpl-fake1","object":"chat.completion.chunk","created":1767225600,"model":%q,"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`,
			req.Model, delta, finish)
	}
	deltaArgs := func(part string) string {
		q, _ := json.Marshal(part)
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
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

// serveResponses answers a Responses API request (the OpenAI adapter's
// path when a recipe asks for hosted tools) in that API's event stream: a
// hosted web search, text citing its source, then a respond call with the
// fake's answer, and the usage.
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	s.record(Request{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Model: req.Model, Stream: true})

	args := s.respondArgs()
	quoted := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	search := `{"id":"ws_fake1","type":"web_search_call","status":"%s","action":{"type":"search","query":"` + SearchQuery + `"}}`
	note := `{"type":"url_citation","url":"` + SourceURL + `","title":"` + SourceTitle + `","start_index":0,"end_index":` + fmt.Sprint(len(CitedText)) + `}`
	message := `{"id":"msg_fake1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + quoted(CitedText) + `,"annotations":[` + note + `]}]}`
	call := `{"id":"fc_fake1","type":"function_call","status":"completed","call_id":"call_fake1","name":"respond","arguments":` + quoted(string(args)) + `}`
	events := []string{
		`{"type":"response.created","response":{"id":"resp_fake1","object":"response","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":` + fmt.Sprintf(search, "in_progress") + `}`,
		`{"type":"response.web_search_call.in_progress","output_index":0,"item_id":"ws_fake1"}`,
		`{"type":"response.web_search_call.completed","output_index":0,"item_id":"ws_fake1"}`,
		`{"type":"response.output_item.done","output_index":0,"item":` + fmt.Sprintf(search, "completed") + `}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_fake1","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","item_id":"msg_fake1","output_index":1,"content_index":0,"delta":` + quoted(CitedText) + `}`,
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
