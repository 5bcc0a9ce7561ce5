package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engine-brain/brain/llm"
)

// Sentinels of failed calls; every error of a failed call wraps one of them,
// or the context's error when the call was cancelled or timed out. Inside an
// *Error they read with the adapter's name, e.g. "openai: rate limited".
// They are llm's (see llm.ErrBadRequest and the others), so that code
// without HTTP can test for them.
var (
	// ErrBadRequest is llm.ErrBadRequest.
	ErrBadRequest = llm.ErrBadRequest
	// ErrAuth is llm.ErrAuth.
	ErrAuth = llm.ErrAuth
	// ErrRateLimited is llm.ErrRateLimited.
	ErrRateLimited = llm.ErrRateLimited
	// ErrUnavailable is llm.ErrUnavailable.
	ErrUnavailable = llm.ErrUnavailable
	// ErrContextTooLong is llm.ErrContextTooLong.
	ErrContextTooLong = llm.ErrContextTooLong
	// ErrPayload is llm.ErrPayload (see Unsendable).
	ErrPayload = llm.ErrPayload
)

// MaxMessage bounds the provider's message kept in an error (see Clip).
const MaxMessage = 1000

// Error is a failed call with what the provider said about it. It wraps its
// Kind (one of the sentinels) and its cause, if any.
type Error struct {
	// Provider names the adapter, e.g. "openai"; it starts the message.
	Provider string
	// Kind is ErrBadRequest, ErrAuth, ErrRateLimited or ErrUnavailable.
	Kind error
	// StatusCode is the HTTP status, 0 when there was none (a connection
	// error, a cut stream, an error event inside a stream, a request
	// refused before it was sent).
	StatusCode int
	// Message is the provider's message (or ours when it gave none), with
	// the API key removed.
	Message string
	// Code is the provider's error code or type, e.g. "insufficient_quota"
	// or "overloaded_error".
	Code string
	// RetryAfter is the wait the provider asked for; 0 when it asked none.
	RetryAfter time.Duration
	// Err is the cause (a connection error), or nil.
	Err error
	// Permanent marks a failure of a retryable Kind that no wait ends, such
	// as a 429 for an exhausted quota.
	Permanent bool
	// ContextTooLong marks an ErrBadRequest whose provider said the
	// request exceeds the model's context window; the Error then wraps
	// ErrContextTooLong too.
	ContextTooLong bool
}

// Error reads like "openai: rate limited (HTTP 429): Rate limit reached
// [rate_limit_exceeded]".
func (e *Error) Error() string {
	var sb strings.Builder
	if e.Provider != "" {
		sb.WriteString(e.Provider)
		sb.WriteString(": ")
	}
	if k, ok := e.Kind.(*llm.Failure); ok {
		sb.WriteString(k.Text())
	} else if e.Kind != nil {
		sb.WriteString(e.Kind.Error())
	}
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

// Unwrap returns the kind, ErrContextTooLong when it applies, and the
// cause.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.ContextTooLong && e.Kind == ErrBadRequest {
		errs = append(errs, ErrContextTooLong)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// Retryable reports whether another attempt may succeed: a rate limit or an
// unavailable provider, unless the failure is Permanent.
func (e *Error) Retryable() bool {
	return !e.Permanent && (e.Kind == ErrRateLimited || e.Kind == ErrUnavailable)
}

// Retryable reports whether err is an *Error that another attempt may cure.
func Retryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable()
}

// StatusKind classifies an HTTP error status: 401 and 403 are ErrAuth, 429
// ErrRateLimited, 408 and 5xx ErrUnavailable, any other ErrBadRequest.
func StatusKind(status int) error {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrAuth
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status == http.StatusRequestTimeout || status >= 500:
		return ErrUnavailable
	default:
		return ErrBadRequest
	}
}

// Redact removes key from s; an empty key leaves s as it is.
func Redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// Clip trims s and bounds it to MaxMessage bytes, on a rune boundary.
func Clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= MaxMessage {
		return s
	}
	cut := MaxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Refused is a request an adapter refuses before sending it: an
// ErrBadRequest without a status, whose message is format's. cause, when not
// nil, is wrapped too.
func Refused(provider string, cause error, format string, args ...any) error {
	return &Error{Provider: provider, Kind: ErrBadRequest, Message: fmt.Sprintf(format, args...), Err: cause}
}

// Unsendable is a request an adapter refuses before sending it because the
// conversation holds a payload of its own provider that it cannot send back:
// a Refused request that wraps ErrPayload too. The message must name where
// the payload is, its format, and what is wrong with it.
func Unsendable(provider string, format string, args ...any) error {
	return Refused(provider, ErrPayload, format, args...)
}

// BodyLine is what an error body that is not JSON says: its first line of
// text, clipped, or nothing for an HTML page (an error page of a proxy
// says nothing useful).
func BodyLine(body []byte) string {
	text := strings.TrimSpace(string(body))
	if strings.HasPrefix(text, "<") {
		return ""
	}
	text, _, _ = strings.Cut(text, "\n")
	return Clip(text)
}

// StreamFailure classifies an error of an attempt that got no error
// response: a stream that sent invalid JSON (unit names what it sends:
// "an event", "a chunk"), a stream cut after the provider answered, or a
// connection that failed. Each is ErrUnavailable; key is redacted.
func StreamFailure(provider, key string, err error, answered bool, unit string) *Error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	msg := "the connection failed: " + err.Error()
	switch {
	case errors.As(err, &syntax) || errors.As(err, &typ):
		msg = "the stream sent " + unit + " that is not valid JSON"
	case answered:
		msg = "the stream was cut: " + err.Error()
	}
	return &Error{Provider: provider, Kind: ErrUnavailable, Message: Redact(msg, key), Err: err}
}
