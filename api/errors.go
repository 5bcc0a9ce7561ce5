package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// Error codes of the API, the "code" of an error body.
const (
	CodeInvalidJSON      = "invalid_json"      // 400: the body is not one JSON object, or not UTF-8
	CodeUnknownField     = "unknown_field"     // 400: the body has a field the request does not know
	CodeInvalidField     = "invalid_field"     // 400: a field has the wrong JSON type, or a value it does not take
	CodeInvalidParameter = "invalid_parameter" // 400: a query parameter is malformed
	CodeInvalidHeader    = "invalid_header"    // 400: a header (Idempotency-Key, Last-Event-ID) is malformed
	CodeUnauthorized     = "unauthorized"      // 401: missing or invalid bearer token
	CodeForbidden        = "forbidden"         // 403: the token's role may not do this
	CodeNotFound         = "not_found"         // 404: no such process, recipe or route
	CodeMethodNotAllowed = "method_not_allowed"
	CodeInvalidState     = "invalid_state"          // 409: the lifecycle forbids this in the process's state
	CodeProcessClosed    = "process_closed"         // 409: the process is DONE or FAILED and takes no messages
	CodeConflict         = "conflict"               // 409: the process changed concurrently; try again
	CodeKeyReused        = "idempotency_key_reused" // 409: a create's key made a process of another recipe
	CodeProcessRunning   = "process_running"        // 409: a turn runs; delete the process once it has ended
	CodeNotPending       = "not_pending"            // 409: a decision on a tool call that waits for none
	CodeBusy             = "busy"                   // 409: a user's message while a turn runs, which the recipe refuses (steering.user_messages: reject)
	CodeBodyTooLarge     = "body_too_large"         // 413
	CodeMissingRecipe    = "missing_recipe"         // 422: create without a recipe
	CodeUnknownRecipe    = "unknown_recipe"         // 422: create from a recipe that does not exist
	CodeEmptyContent     = "empty_content"          // 422: a blank message or input
	CodeInvalidTimer     = "invalid_timer"          // 422: a timer that cannot be armed (none or two of in, at, cron; a bad cron)
	CodeInvalidRecipes   = "invalid_recipes"
	CodeInboxFull        = "inbox_full"      // 429: the process has its inbox limit of messages waiting
	CodeProcessLimit     = "process_limit"   // 429: the owner has the most processes the server allows
	CodeInternal         = "internal"        // 500: details are in the server's log
	CodeUnavailable      = "unavailable"     // 503: Redis cannot serve just now; retry (Retry-After)
	CodeNotImplemented   = "not_implemented" // 501
	CodeNotReady         = "not_ready"       // 503 from /readyz
)

// Error is an API error: an HTTP status with a machine-readable code and a
// message for people. Its JSON is {"error": {"code", "message"}}; the
// client returns the server's errors as *Error, and one whose code has a
// sentinel below matches it (errors.Is).
type Error struct {
	Status  int
	Code    string
	Message string
}

// ErrBusy is inbox.ErrBusy: a user's message refused because the process
// is running a turn and its recipe refuses messages meanwhile
// (steering.user_messages: reject); nothing was stored. An *Error of code
// busy matches it: send the message again once the turn has ended.
var ErrBusy = inbox.ErrBusy

// sentinels are the errors an *Error matches by its code.
var sentinels = map[string]error{CodeBusy: ErrBusy}

// Is makes errors.Is(err, ErrBusy) true for an *Error of code busy.
func (e *Error) Is(target error) bool {
	s, ok := sentinels[e.Code]
	return ok && s == target
}

func errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	return fmt.Sprintf("api: %d %s: %s", e.Status, e.Code, e.Message)
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type errorEnvelope struct {
	Error errorBody `json:"error"`
}

// MarshalJSON writes {"error": {"code", "message"}}.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(errorEnvelope{Error: errorBody{Code: e.Code, Message: e.Message}})
}

// UnmarshalJSON reads {"error": {"code", "message"}}; Status is not part of
// the body and is left as it is.
func (e *Error) UnmarshalJSON(data []byte) error {
	var env errorEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return err
	}
	if env.Error.Code == "" {
		return errors.New("api: not an error body")
	}
	e.Code, e.Message = env.Error.Code, env.Error.Message
	return nil
}

// internalError is all a client learns of an unexpected failure.
var internalError = &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
	Message: "internal error; the server's log has the details"}

// unavailableError answers a request that Redis could not serve just now.
// A message may or may not have been stored: sent again with the same
// Idempotency-Key, it is stored once.
var unavailableError = &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
	Message: "the server's Redis cannot serve just now; try again shortly (a message sent again with the same Idempotency-Key is stored once)"}

// retryAfter is the Retry-After of an unavailableError, in seconds.
const retryAfter = "1"

// apiError maps err to the error the client sees. Unexpected errors become
// a generic 500 and are logged with the request's method and path (never
// its headers).
func (s *Server) apiError(r *http.Request, err error) *Error {
	var (
		e      *Error
		tr     *lifecycle.TransitionError
		big    *http.MaxBytesError
		worker *store.WorkerError
		full   *store.InboxFullError
		owner  *store.OwnerLimitError
		call   *inbox.NotPendingError
		busy   *inbox.BusyError

		operatorOnly *inbox.OperatorOnlyError
	)
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &big):
		return errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "the request body is larger than %d bytes", big.Limit)
	case errors.Is(err, store.ErrNotFound):
		if id := r.PathValue("id"); id != "" {
			return notFound(id)
		}
		return errorf(http.StatusNotFound, CodeNotFound, "not found")
	case errors.As(err, &tr):
		return errorf(http.StatusConflict, CodeInvalidState, "%s is not allowed while the process is %s", action(tr.Event), tr.State)
	case errors.Is(err, lifecycle.ErrForbidden):
		return errorf(http.StatusConflict, CodeInvalidState, "the process's state does not allow this")
	case errors.As(err, &full):
		return errorf(http.StatusTooManyRequests, CodeInboxFull, "the process has %d messages waiting, its inbox limit (the server's inbox_limit); post again once it has read them", full.Limit)
	case errors.As(err, &owner):
		return errorf(http.StatusTooManyRequests, CodeProcessLimit, "%s has the most processes the server allows one user (%d, its max_processes_per_owner; finished ones count until deleted); delete some (brain rm) first",
			owner.Owner, owner.Limit)
	case errors.As(err, &call):
		if call.Decided {
			return errorf(http.StatusConflict, CodeNotPending, "call %s of process %s was decided already; a decision is taken once", call.CallID, call.PID)
		}
		return errorf(http.StatusConflict, CodeNotPending, "process %s has no call %s waiting for approval (it never waited, or its decision has been applied); GET /v1/processes/%s lists the calls that wait",
			call.PID, call.CallID, call.PID)
	case errors.As(err, &busy):
		return errorf(http.StatusConflict, CodeBusy, "process %s is running a turn and its recipe refuses messages meanwhile (steering.user_messages: reject); send it again when the turn has ended — its event stream shows when",
			busy.PID)
	case errors.As(err, &operatorOnly):
		return errorf(http.StatusForbidden, CodeForbidden, "call %s of process %s waits for an operator's decision (its recipe's approval.by); an operator must decide it",
			operatorOnly.CallID, operatorOnly.PID)
	case errors.Is(err, store.ErrClosed):
		return errorf(http.StatusConflict, CodeProcessClosed, "the process is closed (DONE or FAILED) and takes no more messages or timers")
	case errors.As(err, &worker) && errors.Is(err, store.ErrRunning):
		return errorf(http.StatusConflict, CodeProcessRunning, "its worker %s is running a turn; delete the process once that turn has ended", worker.Worker)
	case errors.Is(err, store.ErrRunning):
		return errorf(http.StatusConflict, CodeProcessRunning, "the process is running a turn; delete it once the turn has ended")
	case errors.Is(err, brain.ErrIdempotencyKeyReused):
		return errorf(http.StatusConflict, CodeKeyReused, "%s; use a new Idempotency-Key for a new process", strings.TrimPrefix(err.Error(), "brain: "))
	case errors.Is(err, store.ErrConflict):
		return errorf(http.StatusConflict, CodeConflict, "the process changed concurrently; try again")
	case errors.Is(err, recipes.ErrNotFound):
		return errorf(http.StatusUnprocessableEntity, CodeUnknownRecipe, "%s", strings.TrimPrefix(err.Error(), "brain: "))
	case store.Unavailable(err):
		s.httpMetrics.redisUnavailable.Inc()
		s.logger(r).Warn("request failed: Redis cannot serve just now", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
		return unavailableError
	}
	s.logger(r).Error("request failed", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
	return internalError
}

func notFound(pid string) *Error {
	return errorf(http.StatusNotFound, CodeNotFound, "process %q not found", pid)
}

// action names a lifecycle event as the API's route does.
func action(ev lifecycle.Event) string {
	if ev == lifecycle.Finish {
		return "stop"
	}
	return string(ev)
}

// writeError writes err as an error body.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := s.apiError(r, err)
	switch e.Status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="brain"`)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", retryAfter)
	}
	if oaiPath(r.URL.Path) {
		s.writeJSON(w, r, e.Status, oaiError(e, err))
		return
	}
	s.writeJSON(w, r, e.Status, e)
}

// writeJSON writes v as the JSON body of the answer to r with status.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.logger(r).Error("encoding a response", zap.Error(err))
		status, body = internalError.Status, []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
