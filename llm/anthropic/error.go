package anthropic

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/engine-brain/brain/llm/provider"
)

// Sentinels of failed calls, shared by every adapter (see llm/provider);
// every error of a failed call wraps one of them, or the context's error
// when the call was cancelled or timed out.
var (
	// ErrBadRequest: the provider refused the request (a 4xx other than
	// 401, 403, 408 and 429: unknown model, prompt too long, bad schema,
	// billing). Not retried.
	ErrBadRequest = provider.ErrBadRequest
	// ErrAuth: the key is missing, wrong or lacks access (401, 403). Not
	// retried.
	ErrAuth = provider.ErrAuth
	// ErrRateLimited: too many requests (429). Retried.
	ErrRateLimited = provider.ErrRateLimited
	// ErrUnavailable: the provider failed, is overloaded (529) or could not
	// be reached (5xx, 408, connection errors, a stream cut or garbled
	// mid-way). Retried while nothing of the answer was yielded.
	ErrUnavailable = provider.ErrUnavailable
	// ErrPayload: an ErrBadRequest of this adapter, before sending, for an
	// Anthropic payload of the conversation it cannot send back (it does
	// not decode, or its version is one the adapter does not continue; see
	// check). Not retried; another provider can take the conversation on.
	ErrPayload = provider.ErrPayload
)

// name starts every error and log of this adapter.
const name = "anthropic"

// statusOverloaded is Anthropic's "overloaded" status.
const statusOverloaded = 529

// Error is a failed call with what the provider said about it; its Code is
// Anthropic's error type, e.g. "overloaded_error".
type Error = provider.Error

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
	e := &Error{Provider: name, Kind: provider.StatusKind(status), StatusCode: status, Message: c.redact(msg), Code: c.redact(typ)}
	e.RetryAfter, _ = provider.RetryAfter(header, now)
	e.ContextTooLong = contextTooLong(e)
	return e
}

// contextTooLong reports whether a refusal says that the request exceeds
// the model's context window ("prompt is too long: 208656 tokens > 200000
// maximum"), or the API's size bound for a request.
func contextTooLong(e *Error) bool {
	return e.Kind == ErrBadRequest && (strings.Contains(e.Message, "prompt is too long") || e.Code == "request_too_large")
}

// streamError classifies an error event inside a 200 stream by its error
// type; types of newer versions count as a provider failure.
func (c *Client) streamError(ae *sdk.Error) *Error {
	msg, typ := providerMessage([]byte(ae.RawJSON()))
	if msg == "" {
		msg = "the provider sent an error event"
	}
	e := &Error{Provider: name, Message: c.redact("error event in the stream: " + msg), Code: c.redact(typ)}
	switch typ {
	case "authentication_error", "permission_error":
		e.Kind = ErrAuth
	case "invalid_request_error", "not_found_error", "request_too_large", "billing_error":
		e.Kind = ErrBadRequest
	case "rate_limit_error":
		e.Kind = ErrRateLimited
	default: // overloaded_error, api_error, timeout_error and newer kinds
		e.Kind = ErrUnavailable
	}
	e.ContextTooLong = contextTooLong(e)
	return e
}

// unavailable is a retryable failure without an HTTP status.
func (c *Client) unavailable(msg string, cause error) *Error {
	return &Error{Provider: name, Kind: ErrUnavailable, Message: c.redact(msg), Err: cause}
}

// redact removes the API key from s.
func (c *Client) redact(s string) string { return provider.Redact(s, c.apiKey) }

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
		return provider.Clip(msg), provider.Clip(typ)
	}
	return provider.BodyLine(body), ""
}
