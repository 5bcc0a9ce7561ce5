package gemini

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/engine-brain/brain/llm/provider"
)

// Sentinels of failed calls, shared by every adapter (see llm/provider);
// every error of a failed call wraps one of them, or the context's error
// when the call was cancelled or timed out.
var (
	// ErrBadRequest: the provider refused the request (a 4xx other than
	// 401, 403, 408 and 429, and a 400 for anything but the key: unknown
	// model, prompt too long, bad schema). Not retried.
	ErrBadRequest = provider.ErrBadRequest
	// ErrAuth: the key is missing, wrong or lacks access (401, 403, and
	// 400 with reason API_KEY_INVALID, Gemini's answer to a wrong key). Not
	// retried.
	ErrAuth = provider.ErrAuth
	// ErrRateLimited: too many requests or tokens (429 RESOURCE_EXHAUSTED).
	// Retried.
	ErrRateLimited = provider.ErrRateLimited
	// ErrUnavailable: the provider failed, is overloaded (503 "The model is
	// overloaded") or could not be reached (5xx, 408, connection errors, a
	// stream cut or garbled mid-way). Retried while nothing of the answer
	// was yielded.
	ErrUnavailable = provider.ErrUnavailable
	// ErrPayload: an ErrBadRequest of this adapter, before sending, for a
	// Gemini payload of the conversation it cannot send back (see
	// signatureOf). Not retried; another provider can take the
	// conversation on.
	ErrPayload = provider.ErrPayload
)

// name starts every error and log of this adapter.
const name = "gemini"

// Error is a failed call with what the provider said about it; its Code is
// the reason of Google's ErrorInfo (e.g. "API_KEY_INVALID") or the error's
// status (e.g. "RESOURCE_EXHAUSTED").
type Error = provider.Error

// reasonKeyInvalid is the ErrorInfo reason of a 400 for a wrong key.
const reasonKeyInvalid = "API_KEY_INVALID"

// googleError is the error object of Google APIs:
// {"error": {"code", "message", "status", "details": [...]}}.
type googleError struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	Details []json.RawMessage `json:"details"`
}

// detail is the part of an error detail we read: an ErrorInfo's reason, a
// RetryInfo's delay.
type detail struct {
	Type       string `json:"@type"`
	Reason     string `json:"reason"`
	RetryDelay string `json:"retryDelay"`
}

// info returns the reason of e's ErrorInfo and the delay of its RetryInfo.
func (e *googleError) info() (reason string, retry time.Duration) {
	for _, raw := range e.Details {
		var d detail
		if json.Unmarshal(raw, &d) != nil {
			continue
		}
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo") && reason == "":
			reason = d.Reason
		case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
			// A google.protobuf.Duration in JSON: "37s", "0.5s".
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				retry = v
			}
		}
	}
	return reason, retry
}

// statusError classifies an HTTP error response. body is (the start of)
// its body, now is the clock for a Retry-After given as a date.
func (c *Client) statusError(status int, header http.Header, body []byte, now time.Time) *Error {
	ge, text := parseError(body)
	e := &Error{Provider: name, Kind: provider.StatusKind(status), StatusCode: status}
	var retry time.Duration
	if ge != nil {
		var reason string
		reason, retry = ge.info()
		e.Message, e.Code = ge.Message, ge.Status
		if reason != "" {
			e.Code = reason
		}
		if reason == reasonKeyInvalid {
			e.Kind = ErrAuth
		}
	} else {
		e.Message = text
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	e.Message, e.Code = c.redact(provider.Clip(e.Message)), c.redact(provider.Clip(e.Code))
	if d, ok := provider.RetryAfter(header, now); ok {
		e.RetryAfter = d
	} else {
		e.RetryAfter = retry
	}
	e.ContextTooLong = contextTooLong(e)
	return e
}

// contextTooLong reports whether a refusal says that the request exceeds
// the model's context window ("The input token count (1200293) exceeds the
// maximum number of tokens allowed (1048576).").
func contextTooLong(e *Error) bool {
	return e.Kind == ErrBadRequest && strings.Contains(e.Message, "exceeds the maximum number of tokens")
}

// streamError classifies an error object sent inside a 200 stream by its
// status, or its code when it has no known status.
func (c *Client) streamError(ae genai.APIError) *Error {
	msg := ae.Message
	if msg == "" {
		msg = "the provider sent an error"
	}
	e := &Error{Provider: name, Message: c.redact(provider.Clip("error in the stream: " + msg)), Code: c.redact(provider.Clip(ae.Status))}
	switch ae.Status {
	case "UNAUTHENTICATED", "PERMISSION_DENIED":
		e.Kind = ErrAuth
	case "RESOURCE_EXHAUSTED":
		e.Kind = ErrRateLimited
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "NOT_FOUND", "OUT_OF_RANGE":
		e.Kind = ErrBadRequest
	case "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED", "UNKNOWN", "ABORTED":
		e.Kind = ErrUnavailable
	default:
		e.Kind = ErrUnavailable
		if ae.Code >= 400 {
			e.Kind = provider.StatusKind(ae.Code)
		}
	}
	e.ContextTooLong = contextTooLong(e)
	return e
}

// classify turns an error of an attempt that got no error status into an
// *Error: an error object in the stream, a garbled or cut stream, a failed
// connection, or a request the SDK could not build.
func (c *Client) classify(err error, rec *recorder) *Error {
	var ae genai.APIError
	switch {
	case !rec.sent:
		// Nothing went out: the SDK refused what request.go built.
		return &Error{Provider: name, Kind: ErrBadRequest, Message: c.redact(provider.Clip("the SDK could not build the request: " + err.Error())), Err: err}
	case rec.res.Answered && errors.As(err, &ae):
		return c.streamError(ae)
	case rec.cut != nil:
		return c.unavailable("the stream was cut: "+c.redact(rec.cut.Error()), err)
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax) || errors.As(err, &typ):
		return c.unavailable("the stream sent a line that is not valid JSON", err)
	case rec.res.Answered:
		return c.unavailable("the stream was garbled: "+c.redact(provider.Clip(err.Error())), err)
	}
	return c.unavailable("the connection failed: "+c.redact(provider.Clip(err.Error())), err)
}

// unavailable is a retryable failure without an HTTP status.
func (c *Client) unavailable(msg string, cause error) *Error {
	return &Error{Provider: name, Kind: ErrUnavailable, Message: c.redact(msg), Err: cause}
}

// redact removes the API key from s.
func (c *Client) redact(s string) string { return provider.Redact(s, c.apiKey) }

// parseError finds Google's error object in an error body. Other bodies
// give their first line of text, HTML pages nothing.
func parseError(body []byte) (*googleError, string) {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil {
		var ge googleError
		if json.Unmarshal(v.Error, &ge) == nil && (ge.Message != "" || ge.Status != "") {
			return &ge, ""
		}
		var text string
		if json.Unmarshal(v.Error, &text) == nil {
			return nil, text
		}
		return nil, ""
	}
	return nil, provider.BodyLine(body)
}
