package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// Sentinels of failed calls; every error of a failed call wraps one of them,
// or the context's error when the call was cancelled or timed out.
var (
	// ErrBadRequest: the provider refused the request (a 4xx other than
	// 401, 403, 408 and 429: unknown model, prompt too long, bad schema,
	// billing). Not retried.
	ErrBadRequest = errors.New("anthropic: request refused")
	// ErrAuth: the key is missing, wrong or lacks access (401, 403). Not
	// retried.
	ErrAuth = errors.New("anthropic: authentication failed")
	// ErrRateLimited: too many requests (429). Retried.
	ErrRateLimited = errors.New("anthropic: rate limited")
	// ErrUnavailable: the provider failed, is overloaded (529) or could not
	// be reached (5xx, 408, connection errors, a stream cut or garbled
	// mid-way). Retried while nothing of the answer was yielded.
	ErrUnavailable = errors.New("anthropic: provider unavailable")
)

// statusOverloaded is Anthropic's "overloaded" status.
const statusOverloaded = 529

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
	// Type is the provider's error type, e.g. "overloaded_error".
	Type string
	// RetryAfter is the wait the provider asked for; 0 when it asked none.
	RetryAfter time.Duration
	// Err is the cause (a connection error), or nil.
	Err error

	retryable bool
}

// Error reads like "anthropic: provider unavailable (HTTP 529): Overloaded
// [overloaded_error]".
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
	if e.Type != "" && !strings.Contains(e.Message, e.Type) {
		fmt.Fprintf(&sb, " [%s]", e.Type)
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
	msg, typ := providerMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
		if status == statusOverloaded {
			msg = "Overloaded"
		}
	}
	e := &Error{StatusCode: status, Message: c.redact(msg), Type: c.redact(typ)}
	e.RetryAfter, _ = retryAfter(header, now)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuth
	case status == http.StatusTooManyRequests:
		e.Kind, e.retryable = ErrRateLimited, true
	case status == http.StatusRequestTimeout || status >= 500:
		e.Kind, e.retryable = ErrUnavailable, true
	default:
		e.Kind = ErrBadRequest
	}
	return e
}

// streamError classifies an error event inside a 200 stream by its error
// type; types of newer versions count as a provider failure.
func (c *Client) streamError(ae *sdk.Error) *Error {
	msg, typ := providerMessage([]byte(ae.RawJSON()))
	if msg == "" {
		msg = "the provider sent an error event"
	}
	e := &Error{Message: c.redact("error event in the stream: " + msg), Type: c.redact(typ)}
	switch typ {
	case "authentication_error", "permission_error":
		e.Kind = ErrAuth
	case "invalid_request_error", "not_found_error", "request_too_large", "billing_error":
		e.Kind = ErrBadRequest
	case "rate_limit_error":
		e.Kind, e.retryable = ErrRateLimited, true
	default: // overloaded_error, api_error, timeout_error and newer kinds
		e.Kind, e.retryable = ErrUnavailable, true
	}
	return e
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

// providerMessage finds the message and error type in an error body. It
// knows Anthropic's {"type": "error", "error": {"type", "message"}}, the
// {"error": "text"} and top-level message of proxies; other bodies give
// their first line of text, HTML pages nothing.
func providerMessage(body []byte) (msg, typ string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		var text string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && (obj.Message != "" || obj.Type != ""):
			msg, typ = obj.Message, obj.Type
		case json.Unmarshal(v.Error, &text) == nil && text != "":
			msg = text
		default:
			msg = v.Message
		}
		return clip(msg), clip(typ)
	}
	text := strings.TrimSpace(string(body))
	if strings.HasPrefix(text, "<") { // an HTML error page says nothing useful
		return "", ""
	}
	text, _, _ = strings.Cut(text, "\n")
	return clip(text), ""
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
