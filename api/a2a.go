package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// The A2A server: each exposed recipe is an agent whose JSON-RPC endpoint
// is POST /a2a/{recipe}, and each of its tasks is a process of the recipe
// (the task id is the process id). Requests carry brain's bearer tokens; a
// user sees only the tasks she created, as in the rest of the API.

// legacyMethods are A2A 0.3's names of the methods, which brain does not
// serve (their payloads differ from 1.0's).
var legacyMethods = map[string]string{
	"message/send": "SendMessage", "message/stream": "SendStreamingMessage", "tasks/get": "GetTask",
	"tasks/cancel": "CancelTask", "tasks/resubscribe": "SubscribeToTask", "tasks/list": "ListTasks",
}

// a2aRPC serves one JSON-RPC request to the agent of a recipe. Every
// answer but the 404 of a recipe that is not exposed (and the API's 401
// and 413) is a JSON-RPC response, errors included.
func (s *Server) a2aRPC(w http.ResponseWriter, r *http.Request, who identity) error {
	rec, err := s.exposed(r.PathValue("recipe"))
	if err != nil {
		return err
	}
	w.Header().Set("A2A-Version", a2aVersion)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		return jsonError(err)
	}
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		s.rpcReply(w, r, nil, nil, &rpcError{Code: rpcParseError, Message: fmt.Sprintf("invalid JSON payload: %v; send one JSON-RPC 2.0 request object", errOrObject(err))})
		return nil
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		s.rpcReply(w, r, req.ID, nil, &rpcError{Code: rpcInvalidRequest, Message: `not a JSON-RPC 2.0 request: want {"jsonrpc": "2.0", "id", "method", "params"}`})
		return nil
	}
	if err := checkA2AVersion(r); err != nil {
		s.rpcReply(w, r, req.ID, nil, err)
		return nil
	}
	a := &a2aCall{s: s, w: w, r: r, who: who, recipe: rec, id: req.ID, params: req.Params}
	var result any
	switch req.Method {
	case "SendMessage":
		result, err = a.sendMessage()
	case "SendStreamingMessage":
		err = a.sendStreamingMessage()
	case "GetTask":
		result, err = a.getTask()
	case "ListTasks":
		result, err = a.listTasks()
	case "CancelTask":
		result, err = a.cancelTask()
	case "SubscribeToTask":
		err = a.subscribeToTask()
	case "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig":
		err = &rpcError{Code: rpcPushNotSupported, Message: "push notifications are not supported; stream the task (SendStreamingMessage, SubscribeToTask) or poll it (GetTask)"}
	case "GetExtendedAgentCard":
		err = &rpcError{Code: rpcExtendedCardAbsent, Message: "this agent has no extended card; its card is at " + agentCardPath}
	default:
		if v1, ok := legacyMethods[req.Method]; ok {
			err = &rpcError{Code: rpcVersionNotSupported, Message: fmt.Sprintf("%s is A2A 0.3's method; brain serves A2A %s: call %s with the header A2A-Version: %s", req.Method, a2aVersion, v1, a2aVersion)}
		} else {
			err = &rpcError{Code: rpcMethodNotFound, Message: fmt.Sprintf("method %q not found; the methods are SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask and SubscribeToTask", req.Method)}
		}
	}
	if a.streamed {
		return nil // the stream wrote its own answer, errors included
	}
	if err != nil {
		s.rpcReply(w, r, req.ID, nil, s.rpcErrorOf(r, err))
		return nil
	}
	s.rpcReply(w, r, req.ID, result, nil)
	return nil
}

func errOrObject(err error) error {
	if err == nil {
		return errors.New("the body is not a JSON object")
	}
	return err
}

// checkA2AVersion accepts A2A-Version 1.0 (header or query parameter). A
// request without one is served as 1.0 too: brain serves no other version.
func checkA2AVersion(r *http.Request) *rpcError {
	v := r.Header.Get("A2A-Version")
	if v == "" {
		v = r.URL.Query().Get("A2A-Version")
	}
	if v == "" || v == a2aVersion || strings.HasPrefix(v, a2aVersion+".") {
		return nil
	}
	return &rpcError{Code: rpcVersionNotSupported, Message: fmt.Sprintf("A2A-Version %q is not supported; brain serves A2A %s (send A2A-Version: %s)", v, a2aVersion, a2aVersion)}
}

// rpcReply writes a JSON-RPC response (HTTP 200, as the binding has it).
func (s *Server) rpcReply(w http.ResponseWriter, r *http.Request, id json.RawMessage, result any, e *rpcError) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	s.writeJSON(w, r, http.StatusOK, rpcResponse{JSONRPC: "2.0", ID: id, Result: result, Error: e})
}

// rpcErrorOf maps an error of a method to A2A's JSON-RPC error.
func (s *Server) rpcErrorOf(r *http.Request, err error) *rpcError {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	e := s.apiError(r, err)
	code := rpcInternal
	switch {
	case e.Status == http.StatusNotFound:
		code = rpcTaskNotFound
	case e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity || e.Status == http.StatusRequestEntityTooLarge:
		code = rpcInvalidParams
	case e.Status == http.StatusConflict || e.Status == http.StatusTooManyRequests || e.Status == http.StatusForbidden:
		code = rpcUnsupportedOperation
	}
	return &rpcError{Code: code, Message: e.Message}
}

// a2aCall is one JSON-RPC call being served.
type a2aCall struct {
	s        *Server
	w        http.ResponseWriter
	r        *http.Request
	who      identity
	recipe   *recipes.Recipe
	id       json.RawMessage
	params   json.RawMessage
	streamed bool // the answer is an event stream, written already
}

// decodeParams reads the call's params into v; fields it does not know
// are ignored, as ProtoJSON readers may.
func (a *a2aCall) decodeParams(v any) error {
	if len(a.params) == 0 || string(a.params) == "null" {
		return &rpcError{Code: rpcInvalidParams, Message: "params: required, a JSON object"}
	}
	if err := json.Unmarshal(a.params, v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			return &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("params.%s: got %s, want %s", typ.Field, typ.Value, typ.Type)}
		}
		return &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("params: %v", err)}
	}
	return nil
}

// task returns the record of task id if the caller may see it and it is a
// task of this agent; anything else is TaskNotFoundError.
func (a *a2aCall) task(ctx context.Context, id string) (store.Record, error) {
	if id == "" {
		return store.Record{}, &rpcError{Code: rpcInvalidParams, Message: "params.id: required, the task's id"}
	}
	rec, err := a.s.process(ctx, id, a.who)
	if err == nil && rec.Recipe != a.recipe.Name {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) || isNotFound(err) {
		return store.Record{}, &rpcError{Code: rpcTaskNotFound, Message: fmt.Sprintf("task %q not found", id)}
	}
	return rec, err
}

func isNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// content reads a message for a task: its text and data parts, joined; the
// checks of SendMessageRequest.
func (a *a2aCall) content(p *a2aSendParams) (string, error) {
	bad := func(format string, args ...any) error {
		return &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf(format, args...)}
	}
	m := p.Message
	switch {
	case m == nil:
		return "", bad("params.message: required")
	case strings.TrimSpace(m.MessageID) == "":
		return "", bad("params.message.messageId: required (a client-made id; a message sent again with the same id is taken once)")
	case len(m.MessageID) > maxIdempotencyKey || strings.ContainsFunc(m.MessageID, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		return "", bad("params.message.messageId: at most %d printable characters", maxIdempotencyKey)
	case m.Role != roleUser:
		return "", bad("params.message.role: want %q (got %q)", roleUser, m.Role)
	case len(m.Parts) == 0:
		return "", bad("params.message.parts: at least one part")
	}
	if p.Configuration != nil && len(p.Configuration.TaskPushNotificationConfig) > 0 && string(p.Configuration.TaskPushNotificationConfig) != "null" {
		return "", &rpcError{Code: rpcPushNotSupported, Message: "push notifications are not supported; leave out configuration.taskPushNotificationConfig"}
	}
	var texts []string
	for i, part := range m.Parts {
		switch {
		case part.Text != nil:
			texts = append(texts, *part.Text)
		case len(part.Data) > 0:
			texts = append(texts, string(part.Data))
		case part.URL != nil || part.Raw != nil:
			return "", &rpcError{Code: rpcContentTypeUnsupported, Message: fmt.Sprintf("params.message.parts[%d]: file parts (url, raw) are not supported; send text or data parts", i)}
		default:
			return "", bad("params.message.parts[%d]: want one of text, data, url or raw", i)
		}
	}
	content := strings.Join(texts, "\n\n")
	if strings.TrimSpace(content) == "" {
		return "", bad("params.message.parts: the message has no content (its text is empty or blank)")
	}
	return content, nil
}

// send posts the message of p: a message without a taskId starts a task (a
// process of the recipe), one with a taskId goes to that task's inbox.
// The messageId makes both idempotent.
func (a *a2aCall) send(ctx context.Context, p *a2aSendParams) (store.Record, error) {
	content, err := a.content(p)
	if err != nil {
		return store.Record{}, err
	}
	m := p.Message
	if m.TaskID == "" {
		contextID := m.ContextID
		if contextID == "" {
			contextID = newContextID()
		}
		if len(contextID) > maxIdempotencyKey {
			return store.Record{}, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("params.message.contextId: at most %d characters", maxIdempotencyKey)}
		}
		rec, err := a.s.cfg.Backend.Create(ctx, brain.NewProcess{Recipe: a.recipe.Name, Input: content, Owner: a.who.name,
			Metadata: map[string]string{contextKey: contextID}, IdempotencyKey: "a2a:" + m.MessageID})
		if err != nil && rec.ID == "" {
			if errors.Is(err, brain.ErrIdempotencyKeyReused) {
				return store.Record{}, &rpcError{Code: rpcInvalidParams, Message: "params.message.messageId: already used for a task of another agent; use a new messageId"}
			}
			return store.Record{}, err
		}
		if err != nil {
			a.s.logger(a.r).Error("process created without all its schedules", zap.String("process", rec.ID), zap.Error(err))
		}
		return rec, nil
	}
	rec, err := a.task(ctx, m.TaskID)
	if err != nil {
		return store.Record{}, err
	}
	if m.ContextID != "" && m.ContextID != contextOf(rec) {
		return store.Record{}, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("params.message.contextId: task %s belongs to context %q, not %q", rec.ID, contextOf(rec), m.ContextID)}
	}
	if ended(rec) {
		return store.Record{}, &rpcError{Code: rpcUnsupportedOperation, Message: fmt.Sprintf("task %s has ended (%s) and takes no more messages; start a new task (send a message without taskId)", rec.ID, rec.Status.State)}
	}
	if _, err := a.s.cfg.Backend.Send(ctx, rec.ID, a.who.userFrom(), content, m.MessageID); err != nil {
		if errors.Is(err, store.ErrClosed) {
			return store.Record{}, &rpcError{Code: rpcUnsupportedOperation, Message: fmt.Sprintf("task %s has ended and takes no more messages; start a new task", rec.ID)}
		}
		return store.Record{}, err
	}
	return a.s.cfg.Backend.Get(ctx, rec.ID)
}

func newContextID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "ctx-" + hex.EncodeToString(b[:])
}

// sendMessage is SendMessage: unless configuration.returnImmediately, it
// answers once the task waits for input or has ended (or the client
// leaves).
func (a *a2aCall) sendMessage() (any, error) {
	ctx := a.r.Context()
	var p a2aSendParams
	if err := a.decodeParams(&p); err != nil {
		return nil, err
	}
	rec, err := a.send(ctx, &p)
	if err != nil {
		return nil, err
	}
	t, err := a.s.readTaskLog(ctx, rec.ID)
	if err != nil {
		return nil, err
	}
	var history *int
	if p.Configuration != nil {
		history = p.Configuration.HistoryLength
	}
	if p.Configuration == nil || !p.Configuration.ReturnImmediately {
		for !final(t.status(rec).State) {
			evs, err := a.s.cfg.Backend.Follow(ctx, rec.ID, t.after, a.s.cfg.FollowBlock)
			if err != nil {
				return nil, err
			}
			t.add(evs)
			if rec, err = a.s.cfg.Backend.Get(ctx, rec.ID); err != nil {
				return nil, err
			}
			if _, err := a.s.catchUp(ctx, t); err != nil {
				return nil, err
			}
		}
	}
	return a2aStreamResponse{Task: ptr(t.task(rec, history, true))}, nil
}

func ptr[T any](v T) *T { return &v }

// getTask is GetTask.
func (a *a2aCall) getTask() (any, error) {
	var p a2aTaskParams
	if err := a.decodeParams(&p); err != nil {
		return nil, err
	}
	if p.HistoryLength != nil && *p.HistoryLength < 0 {
		return nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("params.historyLength: must not be negative (got %d)", *p.HistoryLength)}
	}
	rec, err := a.task(a.r.Context(), p.ID)
	if err != nil {
		return nil, err
	}
	t, err := a.s.readTaskLog(a.r.Context(), rec.ID)
	if err != nil {
		return nil, err
	}
	task := t.task(rec, p.HistoryLength, true)
	return task, nil
}

// cancelTask is CancelTask: the process is stopped, which halts a running
// turn at once. The task's owner may cancel it, as may operators.
func (a *a2aCall) cancelTask() (any, error) {
	ctx := a.r.Context()
	var p a2aTaskParams
	if err := a.decodeParams(&p); err != nil {
		return nil, err
	}
	rec, err := a.task(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	notCancelable := &rpcError{Code: rpcTaskNotCancelable, Message: fmt.Sprintf("task %s has ended (%s) and cannot be canceled", rec.ID, rec.Status.State)}
	if ended(rec) {
		return nil, notCancelable
	}
	by := a.who.operatorBy()
	if a.who.role == RoleUser {
		by = a.who.userFrom()
	}
	rec, err = a.s.cfg.Backend.Transition(ctx, rec.ID, lifecycle.Finish, by)
	var tr *lifecycle.TransitionError
	if errors.As(err, &tr) || errors.Is(err, lifecycle.ErrForbidden) {
		return nil, notCancelable
	}
	if err != nil {
		return nil, err
	}
	t, err := a.s.readTaskLog(ctx, rec.ID)
	if err != nil {
		return nil, err
	}
	return t.task(rec, nil, true), nil
}

// listTasks is ListTasks: the caller's tasks of this agent (a user's own,
// all for operators), filtered by contextId and status, a page at a time.
func (a *a2aCall) listTasks() (any, error) {
	ctx := a.r.Context()
	var p a2aListParams
	if len(a.params) == 0 || string(a.params) == "null" {
		a.params = json.RawMessage("{}")
	}
	if err := a.decodeParams(&p); err != nil {
		return nil, err
	}
	state, ok := taskStateParam(p.Status)
	if !ok {
		return nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("params.status: %q is not a task state; want one of %s, %s, %s, %s, %s, %s",
			p.Status, taskSubmitted, taskWorking, taskInputRequired, taskCompleted, taskFailed, taskCanceled)}
	}
	size := 50
	if p.PageSize != nil {
		if *p.PageSize < 1 || *p.PageSize > 100 {
			return nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("params.pageSize: want 1 to 100 (got %d)", *p.PageSize)}
		}
		size = *p.PageSize
	}
	if p.HistoryLength != nil && *p.HistoryLength < 0 {
		return nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("params.historyLength: must not be negative (got %d)", *p.HistoryLength)}
	}
	after := p.PageToken
	if after != "" && !validCursor(after) {
		return nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("params.pageToken: %q is not a token a page returned as nextPageToken", after)}
	}
	list := a.s.cfg.Backend.List
	if a.who.role == RoleUser {
		list = func(ctx context.Context, st lifecycle.State, after string, limit int) ([]store.Record, string, error) {
			return a.s.cfg.Backend.ListOwned(ctx, a.who.name, st, after, limit)
		}
	}
	history := p.HistoryLength
	if history == nil {
		history = ptr(0)
	}
	out := a2aListResult{Tasks: []a2aTask{}}
	for range maxScanRounds {
		recs, next, err := list(ctx, "", after, size-len(out.Tasks))
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			if !a.who.sees(rec) || rec.Recipe != a.recipe.Name || (p.ContextID != "" && contextOf(rec) != p.ContextID) {
				continue
			}
			t, err := a.s.readTaskLog(ctx, rec.ID)
			if errors.Is(err, store.ErrNotFound) {
				continue // deleted meanwhile
			}
			if err != nil {
				return nil, err
			}
			task := t.task(rec, history, p.IncludeArtifacts)
			if state != "" && task.Status.State != state {
				continue
			}
			out.Tasks = append(out.Tasks, task)
		}
		after = next
		if next == "" || len(out.Tasks) >= size {
			break
		}
	}
	out.NextPageToken, out.PageSize, out.TotalSize = after, size, len(out.Tasks)
	return out, nil
}

// ended reports whether the task of rec has ended: DONE (completed or
// canceled) or FAILED (which only an operator's retry revives).
func ended(rec store.Record) bool {
	return rec.Status.State == lifecycle.Done || rec.Status.State == lifecycle.Failed
}
