package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream    bool              `json:"stream"`
	User      string            `json:"user"`
	Metadata  map[string]string `json:"metadata"`
	Tools     []json.RawMessage `json:"tools"`
	Functions []json.RawMessage `json:"functions"`
}

var chatParams = []string{"model", "messages", "stream", "user", "metadata", "tools", "functions"}

// chatCompletion posts the last user message of the request to the
// process its user field or X-Brain-Process header names, or to a new
// process of the model's recipe, and answers with the turn that drains
// it. The messages before it are the client's copy of the conversation,
// which the process keeps itself. The answer's X-Brain-Process header
// names the process, to continue it.
func (s *Server) chatCompletion(w http.ResponseWriter, r *http.Request, who identity) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req chatRequest
	if err := s.decodeOAI(w, r, chatParams, &req); err != nil {
		return err
	}
	if len(req.Tools) > 0 || len(req.Functions) > 0 {
		return badParam("tools", "not supported: the recipe has the tools; choose the recipe with model")
	}
	last := -1
	for i, m := range req.Messages {
		if m.Role == "user" {
			last = i
		}
	}
	if last < 0 {
		return badParam("messages", "want at least one message of role user")
	}
	content, err := contentText(fmt.Sprintf("messages[%d].content", last), req.Messages[last].Content, "text")
	if err != nil {
		return err
	}
	if strings.TrimSpace(content) == "" {
		return badParam(fmt.Sprintf("messages[%d].content", last), "must not be empty or blank")
	}
	pid := r.Header.Get(processHeader)
	param := processHeader
	if pid == "" {
		pid, param = req.User, "user"
	}
	notFound := &paramError{err: errorf(http.StatusNotFound, CodeNotFound, "%s: process %q not found; send no %s for a new process", param, pid, param), param: param}
	if pid != "" && !validCursor("0:"+pid) {
		return notFound
	}
	recipe, err := s.target(r.Context(), who, pid, req.Model, notFound)
	if err != nil {
		return err
	}
	x, err := s.post(r.Context(), s.logger(r), who, pid, recipe, content, key, req.Metadata, req.Stream)
	if err != nil {
		return err
	}
	w.Header().Set(processHeader, x.pid)
	id := exchangeID("chatcmpl-", x.pid, x.msgID)
	created := time.Now().Unix()
	if req.Stream {
		return s.streamChat(w, r, x, id, created)
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	a, err := s.await(r.Context(), x, nil)
	if err != nil {
		return err
	}
	stop := "stop"
	s.writeJSON(w, r, http.StatusOK, oaiChatCompletion{
		ID: id, Object: "chat.completion", Created: created, Model: recipe,
		Choices: []oaiChatChoice{{Message: &oaiChatMessage{Role: "assistant", Content: &a.answer}, FinishReason: &stop}},
		Usage:   &oaiChatUsage{PromptTokens: a.input, CompletionTokens: a.output, TotalTokens: a.input + a.output},
	})
	return nil
}

// streamChat streams the answer as chat.completion.chunk events: the
// assistant's role, the answer's deltas, the finish reason with the
// usage, then [DONE].
func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, x posted, id string, created int64) error {
	st, err := startStream(w, false)
	if err != nil {
		x.stop()
		return nil
	}
	chunk := func(delta oaiChatMessage, finish *string, usage *oaiChatUsage) error {
		return st.send("", oaiChatCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: x.recipe,
			Choices: []oaiChatChoice{{Delta: &delta, FinishReason: finish}}, Usage: usage})
	}
	empty := ""
	if err := chunk(oaiChatMessage{Role: "assistant", Content: &empty}, nil, nil); err != nil {
		x.stop()
		return nil
	}
	a, err := s.await(r.Context(), x, func(d string) error { return chunk(oaiChatMessage{Content: &d}, nil, nil) })
	if err != nil {
		if r.Context().Err() == nil {
			e := s.apiError(r, err)
			_ = st.send("", oaiErrorBody{Error: oaiErrorDetail{Message: e.Message, Type: oaiErrorType(e.Status), Code: e.Code}})
		}
		return nil
	}
	stop := "stop"
	if err := chunk(oaiChatMessage{}, &stop, &oaiChatUsage{PromptTokens: a.input, CompletionTokens: a.output, TotalTokens: a.input + a.output}); err != nil {
		return nil
	}
	_, _ = w.Write([]byte("data: [DONE]\n\n"))
	_ = st.rc.Flush()
	return nil
}
