package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// Sentinels of failed calls; every error of a failed call wraps one of them,
// or the context's error when the call was cancelled or timed out.
var (
	// ErrBadRequest: the provider refused the request (a 4xx other than
	// 401, 403, 408 and 429: unknown model, context too long, bad schema).
	// Not retried.
	ErrBadRequest = errors.New("openai: request refused")
	// ErrAuth: the key is missing, wrong or lacks access (401, 403). Not
	// retried.
	ErrAuth = errors.New("openai: authentication failed")
	// ErrRateLimited: too many requests (429). Retried, except for an
	// exhausted quota.
	ErrRateLimited = errors.New("openai: rate limited")
	// ErrUnavailable: the provider failed or could not be reached (5xx,
	// 408, connection errors, a stream cut or garbled mid-way). Retried
	// while nothing of the answer was yielded.
	ErrUnavailable = errors.New("openai: provider unavailable")
)

// maxMessage bounds the provider's message kept in an error.
const maxMessage = 1000

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// Error is a failed call with what the provider said about it. It wraps its
// Kind (one of the sentinels) and its cause, if any.
type Error struct {
	// Kind is ErrBadRequest, ErrAuth, ErrRateLimited or ErrUnavailable.
	Kind error
	// StatusCode is the HTTP status, 0 when there was none (a connection
	// error, a cut stream, an error event inside a stream).
	StatusCode int
	// Message is the provider's message (or ours when it gave none), with
	// the API key removed.
	Message string
	// Code is the provider's error code, e.g. "insufficient_quota".
	Code string
	// RetryAfter is the wait the provider asked for; 0 when it asked none.
	RetryAfter time.Duration
	// Err is the cause (a connection error), or nil.
	Err error

	retryable bool
}

// Error reads like "openai: rate limited (HTTP 429): Rate limit reached".
func (e *Error) Error() string {
	var sb strings.Builder
	sb.WriteString(e.Kind.Error())
	if e.StatusCode != 0 {
		fmt.Fprintf(&sb, " (HTTP %d)", e.StatusCode)
	}
	if e.Message != "" {
		sb.WriteString(": ")
		sb.WriteString(e.Message)
	}
	if e.Code != "" && !strings.Contains(e.Message, e.Code) {
		fmt.Fprintf(&sb, " [%s]", e.Code)
	}
	return sb.String()
}

// Unwrap returns the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Retryable reports whether another attempt may succeed.
func (e *Error) Retryable() bool { return e.retryable }

// statusError classifies an HTTP error response. body is (the start of)
// its body, now is the clock for a Retry-After given as a date.
func (c *Client) statusError(status int, header http.Header, body []byte, now time.Time) *Error {
	msg, code := providerMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &Error{StatusCode: status, Message: c.redact(msg), Code: c.redact(code)}
	e.RetryAfter, _ = retryAfter(header, now)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuth
	case status == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
		// An exhausted quota is a 429 too, but no wait ends it.
		e.retryable = code != "insufficient_quota"
	case status == http.StatusRequestTimeout || status >= 500:
		e.Kind, e.retryable = ErrUnavailable, true
	default:
		e.Kind = ErrBadRequest
	}
	return e
}

// streamError classifies an error event inside a 200 stream: by the HTTP
// status some servers put in its code, else as a provider failure.
func (c *Client) streamError(se *ssestream.StreamError) *Error {
	msg, code := providerMessage(se.Event.Data)
	if msg == "" {
		msg = "the provider sent an error event"
	}
	if status, err := strconv.Atoi(code); err == nil && status >= 400 && status < 600 {
		e := c.statusError(status, nil, se.Event.Data, time.Time{})
		e.StatusCode, e.Code = 0, "" // the response itself was a 200; the code was its status
		return e
	}
	return &Error{Kind: ErrUnavailable, Message: c.redact("error event in the stream: " + msg), Code: c.redact(code), retryable: true}
}

// unavailable is a retryable failure without an HTTP status.
func (c *Client) unavailable(msg string, cause error) *Error {
	return &Error{Kind: ErrUnavailable, Message: c.redact(msg), Err: cause, retryable: true}
}

// redact removes the API key from s.
func (c *Client) redact(s string) string {
	if c.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.apiKey, "[redacted]")
}

// providerMessage finds the message and code in an error body. It knows
// OpenAI's {"error": {"message", "code"}}, the {"error": "text"} of
// some compatible servers, and top-level message or detail fields; other
// bodies give their first line of text, HTML pages nothing.
func providerMessage(body []byte) (msg, code string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
		Code    any             `json:"code"`
	}
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		}
		var text string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && (obj.Message != "" || obj.Code != nil):
			msg, code = obj.Message, scalar(obj.Code)
		case json.Unmarshal(v.Error, &text) == nil && text != "":
			msg = text
		case v.Message != "":
			msg, code = v.Message, scalar(v.Code)
		case v.Detail != nil:
			msg = scalar(v.Detail)
			if msg == "" {
				b, _ := json.Marshal(v.Detail)
				msg = string(b)
			}
		}
		return clip(msg), clip(code)
	}
	text := strings.TrimSpace(string(body))
	if strings.HasPrefix(text, "<") { // an HTML error page says nothing useful
		return "", ""
	}
	text, _, _ = strings.Cut(text, "\n")
	return clip(text), ""
}

// scalar renders a JSON string or number; other values give "".
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// clip bounds s to maxMessage bytes, on a rune boundary.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
