package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/engine-brain/brain/lifecycle"
)

// maxIdempotencyKey bounds the Idempotency-Key header.
const maxIdempotencyKey = 255

// decode reads the request body, at most MaxBody bytes, into v: one JSON
// object, UTF-8 throughout, with no unknown fields. Every JSON body of the
// API is read here.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		return jsonError(err)
	}
	if err := checkUTF8(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "the body must hold one JSON object and nothing after it")
	}
	return nil
}

// jsonError maps a decoding error to the error the client sees.
func jsonError(err error) *Error {
	var (
		big    *http.MaxBytesError
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &big):
		return errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "the request body is larger than %d bytes", big.Limit)
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "the request body is empty; send a JSON object")
	case errors.As(err, &syntax):
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "invalid JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, CodeInvalidJSON, "the JSON body ends too early")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return errorf(http.StatusBadRequest, CodeInvalidJSON, "the body must be a JSON object (got %s)", typ.Value)
		}
		return errorf(http.StatusBadRequest, CodeInvalidField, "field %q: got %s, want %s", typ.Field, typ.Value, typ.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no error type for unknown fields.
		return errorf(http.StatusBadRequest, CodeUnknownField, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return errorf(http.StatusBadRequest, CodeInvalidJSON, "invalid JSON body: %v", err)
}

// requireContent refuses empty or blank message content.
func requireContent(field, content string) error {
	if strings.TrimSpace(content) == "" {
		return errorf(http.StatusUnprocessableEntity, CodeEmptyContent, "%s: must not be empty or blank", field)
	}
	return nil
}

// idempotencyKey returns the Idempotency-Key header, checked.
func idempotencyKey(r *http.Request) (string, error) {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > maxIdempotencyKey || strings.ContainsFunc(key, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return "", errorf(http.StatusBadRequest, CodeInvalidHeader, "Idempotency-Key: at most %d printable characters", maxIdempotencyKey)
	}
	return key, nil
}

// limitParam reads the limit query parameter: 0 (or absent) means def,
// more than most means most.
func limitParam(r *http.Request, def, most int) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, errorf(http.StatusBadRequest, CodeInvalidParameter, "limit: want a whole number from 0 to %d (got %q)", most, s)
	}
	switch {
	case n == 0:
		return def, nil
	case n > most:
		return most, nil
	}
	return n, nil
}

// progressParam reads the progress query parameter of an event stream:
// whether it carries the progress of running turns (default yes).
func progressParam(r *http.Request) (bool, error) {
	switch s := r.URL.Query().Get("progress"); s {
	case "", "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	default:
		return false, errorf(http.StatusBadRequest, CodeInvalidParameter,
			"progress: want 0 (durable events only) or 1 (the default: the progress of running turns too) (got %q)", s)
	}
}

// stateParam reads the state query parameter ("" = every state); the case
// of the letters does not matter.
func stateParam(r *http.Request) (lifecycle.State, error) {
	s := r.URL.Query().Get("state")
	if s == "" {
		return "", nil
	}
	st, err := lifecycle.ParseState(strings.ToUpper(s))
	if err != nil {
		return "", errorf(http.StatusBadRequest, CodeInvalidParameter, "state: %q is not a state; want one of READY, RUNNING, BLOCKED, PAUSED, DONE, FAILED", s)
	}
	return st, nil
}

// validCursor reports whether s has the shape of a cursor the store's List
// returns ("<ms>:<id>"), so that a mangled cursor is a 400, not a store
// error.
func validCursor(s string) bool {
	ms, id, ok := strings.Cut(s, ":")
	return ok && digits(ms) && id != "" && !strings.ContainsFunc(id, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.')
	})
}

// validEventID reports whether s is a log event id: a Redis stream id
// "<ms>-<seq>" (or "<ms>").
func validEventID(s string) bool {
	ms, seq, found := strings.Cut(s, "-")
	return digits(ms) && (!found || digits(seq))
}

func digits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// view is which events of a log a request gets.
type view string

const (
	viewUser view = "user" // conversation.UserView
	viewRaw  view = "raw"  // the whole log
)

// viewParam reads the view query parameter (default user); the raw view
// needs the operator role.
func viewParam(r *http.Request, who identity) (view, error) {
	switch v := view(r.URL.Query().Get("view")); v {
	case "", viewUser:
		return viewUser, nil
	case viewRaw:
		if !who.role.allows(RoleOperator) {
			return "", errorf(http.StatusForbidden, CodeForbidden, "the raw view needs the operator role; use view=user")
		}
		return viewRaw, nil
	default:
		return "", errorf(http.StatusBadRequest, CodeInvalidParameter, "view: want user or raw (got %q)", v)
	}
}
