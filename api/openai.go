package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// The OpenAI-compatible face: clients that speak OpenAI's Responses or
// Chat Completions API talk to brain's processes. A model is a recipe
// ("default" or "brain:default"); a response is the turn that answers the
// request's input, posted as the user's message; previous_response_id (or
// conversation, the process id) continues a process, and chat completions
// go to the process their user field or X-Brain-Process header names.
// Errors take OpenAI's shape on these routes (oaiPath), so that the SDKs
// raise their typed errors.

// modelPrefix may precede a recipe's name in model.
const modelPrefix = "brain:"

// processHeader names a process: of a chat completion's request, the one
// to continue; of every answer of the face, the process that answered.
const processHeader = "X-Brain-Process"

// oaiPath reports whether path is a route of the OpenAI-compatible face.
func oaiPath(path string) bool {
	switch path {
	case "/v1/responses", "/v1/chat/completions", "/v1/models":
		return true
	}
	return strings.HasPrefix(path, "/v1/models/")
}

// paramError is a 400 that names the request parameter at fault, as
// OpenAI's errors do.
type paramError struct {
	err   *Error
	param string
}

func (e *paramError) Error() string { return e.err.Error() }
func (e *paramError) Unwrap() error { return e.err }

func badParam(param, format string, args ...any) error {
	return &paramError{err: errorf(http.StatusBadRequest, CodeInvalidField, "%s: %s", param, fmt.Sprintf(format, args...)), param: param}
}

// oaiErrorType is the OpenAI error type of an HTTP status.
func oaiErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusConflict:
		return "conflict_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// oaiError is e in OpenAI's error shape.
func oaiError(e *Error, err error) oaiErrorBody {
	body := oaiErrorBody{Error: oaiErrorDetail{Message: e.Message, Type: oaiErrorType(e.Status), Code: e.Code}}
	var pe *paramError
	if errors.As(err, &pe) {
		body.Error.Param = &pe.param
	}
	return body
}

// Parameters of the face's requests that are taken and ignored: they tune
// a model's sampling, storage or output, which the recipe decides.
var ignoredParams = []string{
	"store", "temperature", "top_p", "max_output_tokens", "max_tokens", "max_completion_tokens", "truncation",
	"parallel_tool_calls", "service_tier", "include", "reasoning", "text", "stream_options", "tool_choice",
	"prompt_cache_key", "safety_identifier", "top_logprobs", "logprobs", "seed", "n", "frequency_penalty",
	"presence_penalty", "stop", "reasoning_effort", "response_format", "modalities", "verbosity",
}

// decodeOAI reads a request body of the face into v: one JSON object,
// UTF-8, whose parameters are v's or ignoredParams; another parameter is a
// 400 that names it.
func (s *Server) decodeOAI(w http.ResponseWriter, r *http.Request, known []string, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		return jsonError(err)
	}
	if err := checkUTF8(body); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return jsonError(err)
	}
	if fields == nil {
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "the body must be a JSON object (got null)")
	}
	for name := range fields {
		if !slices.Contains(known, name) && !slices.Contains(ignoredParams, name) {
			return &paramError{err: errorf(http.StatusBadRequest, CodeUnknownField,
				"unknown parameter %q: brain's OpenAI-compatible API takes %s", name, strings.Join(known, ", ")), param: name}
		}
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			return badParam(typ.Field, "got %s, want %s", typ.Value, typ.Type)
		}
		return jsonError(err)
	}
	return nil
}

// recipeOf resolves model to a recipe's name.
func (s *Server) recipeOf(model string) (string, error) {
	name := strings.TrimPrefix(model, modelPrefix)
	if name == "" {
		return "", &paramError{err: errorf(http.StatusBadRequest, CodeMissingRecipe, "model: required: a recipe's name; GET /v1/models lists them"), param: "model"}
	}
	if recipes.CheckName(name) != nil {
		return "", s.unknownModel(model)
	}
	if _, err := s.cfg.Backend.Recipes().Get(name); err != nil {
		return "", s.unknownModel(model)
	}
	return name, nil
}

func (s *Server) unknownModel(model string) error {
	return &paramError{err: errorf(http.StatusNotFound, "model_not_found",
		"model %q is not a recipe of this server; a model names one (%q or %q); GET /v1/models lists them",
		model, "default", modelPrefix+"default"), param: "model"}
}

// checkModel refuses a model other than the recipe of the process a
// request continues.
func checkModel(model, recipe string) error {
	if model == "" || strings.TrimPrefix(model, modelPrefix) == recipe {
		return nil
	}
	return badParam("model", "%q, but the process continued is of recipe %q; send model %q or none", model, recipe, recipe)
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request, _ identity) error {
	list := oaiModelList{Object: "list", Data: []oaiModel{}}
	for _, name := range s.cfg.Backend.Recipes().Names() {
		list.Data = append(list.Data, oaiModel{ID: name, Object: "model", OwnedBy: "brain"})
	}
	s.writeJSON(w, r, http.StatusOK, list)
	return nil
}

func (s *Server) getModel(w http.ResponseWriter, r *http.Request, _ identity) error {
	name, err := s.recipeOf(r.PathValue("model"))
	if err != nil {
		return err
	}
	s.writeJSON(w, r, http.StatusOK, oaiModel{ID: name, Object: "model", OwnedBy: "brain"})
	return nil
}

// responsesRequest is the body of POST /v1/responses.
type responsesRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       *string           `json:"instructions"`
	PreviousResponseID string            `json:"previous_response_id"`
	Conversation       json.RawMessage   `json:"conversation"`
	Stream             bool              `json:"stream"`
	Metadata           map[string]string `json:"metadata"`
	Tools              []json.RawMessage `json:"tools"`
	User               string            `json:"user"`
	Background         bool              `json:"background"`
}

var responsesParams = []string{"model", "input", "instructions", "previous_response_id", "conversation", "stream", "metadata", "tools", "user", "background"}

// createResponse posts the input as the user's message, to the process
// that previous_response_id or conversation names or to a new one of the
// model's recipe, and answers with the turn that drains it.
func (s *Server) createResponse(w http.ResponseWriter, r *http.Request, who identity) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req responsesRequest
	if err := s.decodeOAI(w, r, responsesParams, &req); err != nil {
		return err
	}
	switch {
	case req.Instructions != nil && *req.Instructions != "":
		return badParam("instructions", "not supported: the recipe has the instructions; choose the recipe with model")
	case len(req.Tools) > 0:
		return badParam("tools", "not supported: the recipe has the tools; choose the recipe with model")
	case req.Background:
		return badParam("background", "not supported; stream the response instead (stream: true)")
	}
	content, err := inputText(req.Input)
	if err != nil {
		return err
	}
	pid, err := conversationID(req.Conversation)
	if err != nil {
		return err
	}
	switch {
	case req.PreviousResponseID != "" && pid != "":
		return badParam("conversation", "send previous_response_id or conversation, not both")
	case req.PreviousResponseID != "":
		p, _, ok := parseExchangeID("resp_", req.PreviousResponseID)
		if !ok {
			return &paramError{err: errorf(http.StatusNotFound, CodeNotFound, "previous_response_id: %q is not a response of this server", req.PreviousResponseID),
				param: "previous_response_id"}
		}
		pid = p
	}
	recipe, err := s.target(r.Context(), who, pid, req.Model, &paramError{err: errorf(http.StatusNotFound, CodeNotFound,
		"process %q not found (of previous_response_id or conversation)", pid), param: "previous_response_id"})
	if err != nil {
		return err
	}
	x, err := s.post(r.Context(), s.logger(r), who, pid, recipe, content, key, req.Metadata, req.Stream)
	if err != nil {
		return err
	}
	w.Header().Set(processHeader, x.pid)
	resp := newResponse(x, req.PreviousResponseID, req.Metadata)
	if req.Stream {
		return s.streamResponse(w, r, x, resp)
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{}) // a turn may outlast the server's WriteTimeout
	a, err := s.await(r.Context(), x, nil)
	if err != nil {
		return err
	}
	resp.finish(a)
	s.writeJSON(w, r, http.StatusOK, resp)
	return nil
}

// newResponse is the response to exchange x, in progress.
func newResponse(x posted, previous string, metadata map[string]string) *oaiResponse {
	resp := &oaiResponse{
		ID: exchangeID("resp_", x.pid, x.msgID), Object: "response", CreatedAt: time.Now().Unix(), Status: "in_progress",
		Model: x.recipe, Output: []oaiMessage{}, Conversation: &oaiConversationID{ID: x.pid},
		Metadata: metadata, Tools: []json.RawMessage{}, ToolChoice: "auto",
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	if previous != "" {
		resp.PreviousResponseID = &previous
	}
	return resp
}

// message is the response's output message with text, in status st.
func (resp *oaiResponse) message(text, st string) oaiMessage {
	return oaiMessage{ID: "msg_" + strings.TrimPrefix(resp.ID, "resp_"), Type: "message", Role: "assistant", Status: st,
		Content: []oaiOutText{{Type: "output_text", Text: text, Annotations: []json.RawMessage{}, Logprobs: []json.RawMessage{}}}}
}

// finish completes the response with what the turn answered.
func (resp *oaiResponse) finish(a answered) {
	st, reason := responseStatus(a.end)
	resp.Status = st
	if reason != "" {
		resp.IncompleteDetails = &oaiIncomplete{Reason: reason}
	}
	if !a.started.IsZero() {
		resp.CreatedAt = a.started.Unix()
	}
	resp.Output = []oaiMessage{resp.message(a.answer, "completed")}
	resp.OutputText = a.answer
	resp.Usage = &oaiUsage{InputTokens: a.input, OutputTokens: a.output, TotalTokens: a.input + a.output}
}

// inputText reads a request's input: a string, or a list of user messages
// whose content is a string or input_text parts (joined by blank lines).
func inputText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", badParam("input", "required: the user's message, a string")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		if strings.TrimSpace(text) == "" {
			return "", badParam("input", "must not be empty or blank")
		}
		return text, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return "", badParam("input", "want a string or a list of messages")
	}
	var parts []string
	for i, it := range items {
		at := fmt.Sprintf("input[%d]", i)
		if it.Type != "" && it.Type != "message" {
			return "", badParam(at+".type", "%q is not supported: brain takes the user's messages only", it.Type)
		}
		if it.Role != "user" {
			return "", badParam(at+".role", "%q is not supported: brain keeps the conversation and the recipe its instructions; send the new user message only, and continue with previous_response_id", it.Role)
		}
		t, err := contentText(at+".content", it.Content, "input_text")
		if err != nil {
			return "", err
		}
		parts = append(parts, t)
	}
	text = strings.Join(parts, "\n\n")
	if strings.TrimSpace(text) == "" {
		return "", badParam("input", "must hold a message that is not empty or blank")
	}
	return text, nil
}

// contentText reads a message's content: a string, or parts all of type
// textType, joined.
func contentText(at string, raw json.RawMessage, textType string) (string, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badParam(at, "want a string or a list of %s parts", textType)
	}
	var texts []string
	for j, p := range parts {
		if p.Type != textType {
			return "", badParam(fmt.Sprintf("%s[%d].type", at, j), "%q is not supported: brain takes text (%s) only", p.Type, textType)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n\n"), nil
}

// conversationID reads the conversation parameter: a process id, as a
// string or {"id": ...}.
func conversationID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var id string
	if json.Unmarshal(raw, &id) != nil {
		var obj struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			return "", badParam("conversation", "want a process id, as a string or {\"id\": ...}")
		}
		id = obj.ID
	}
	if id == "" || !validCursor("0:"+id) {
		return "", badParam("conversation", "%q is not a process id", id)
	}
	return id, nil
}

// target returns the recipe a request of the OpenAI face runs: that of
// process pid, which who must see (else notFound) and model, when given,
// must name; without a process, the recipe model names.
func (s *Server) target(ctx context.Context, who identity, pid, model string, notFound *paramError) (string, error) {
	if pid == "" {
		return s.recipeOf(model)
	}
	rec, err := s.process(ctx, pid, who)
	var e *Error
	if errors.Is(err, store.ErrNotFound) || errors.As(err, &e) && e.Status == http.StatusNotFound {
		return "", notFound
	}
	if err != nil {
		return "", err
	}
	if err := checkModel(model, rec.Recipe); err != nil {
		return "", err
	}
	return rec.Recipe, nil
}
