package openai

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/engine-brain/brain/llm/provider"
)

// Sentinels of failed calls, shared by every adapter (see llm/provider);
// every error of a failed call wraps one of them, or the context's error
// when the call was cancelled or timed out.
var (
	// ErrBadRequest: the provider refused the request (a 4xx other than
	// 401, 403, 408 and 429: unknown model, context too long, bad schema).
	// Not retried.
	ErrBadRequest = provider.ErrBadRequest
	// ErrAuth: the key is missing, wrong or lacks access (401, 403). Not
	// retried.
	ErrAuth = provider.ErrAuth
	// ErrRateLimited: too many requests (429). Retried, except for an
	// exhausted quota.
	ErrRateLimited = provider.ErrRateLimited
	// ErrUnavailable: the provider failed or could not be reached (5xx,
	// 408, connection errors, a stream cut or garbled mid-way). Retried
	// while nothing of the answer was yielded.
	ErrUnavailable = provider.ErrUnavailable
	// ErrPayload: an ErrBadRequest of this adapter, before sending, for an
	// OpenAI payload of the conversation it cannot send back (it does not
	// decode, or its format or version is one the adapter does not
	// continue; see ownPayload). Not retried; another provider can take
	// the conversation on.
	ErrPayload = provider.ErrPayload
)

// name starts every error and log of this adapter.
const name = "openai"

// Error is a failed call with what the provider said about it; its Code is
// OpenAI's error code, e.g. "insufficient_quota".
type Error = provider.Error

// statusError classifies an HTTP error response. body is (the start of)
// its body, now is the clock for a Retry-After given as a date.
func (c *Client) statusError(status int, header http.Header, body []byte, now time.Time) *Error {
	msg, code := providerMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &Error{Provider: name, Kind: provider.StatusKind(status), StatusCode: status, Message: c.redact(msg), Code: c.redact(code)}
	e.RetryAfter, _ = provider.RetryAfter(header, now)
	// An exhausted quota is a 429 too, but no wait ends it.
	e.Permanent = status == http.StatusTooManyRequests && code == "insufficient_quota"
	e.ContextTooLong = contextTooLong(e)
	return e
}

// contextTooLong reports whether a refusal says that the request exceeds
// the model's context window: OpenAI's code, or the wording of servers that
// copy OpenAI's message without its code (vLLM).
func contextTooLong(e *Error) bool {
	return e.Kind == ErrBadRequest &&
		(e.Code == "context_length_exceeded" || strings.Contains(e.Message, "maximum context length"))
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
	return &Error{Provider: name, Kind: ErrUnavailable, Message: c.redact("error event in the stream: " + msg), Code: c.redact(code)}
}

// unavailable is a retryable failure without an HTTP status.
func (c *Client) unavailable(msg string, cause error) *Error {
	return &Error{Provider: name, Kind: ErrUnavailable, Message: c.redact(msg), Err: cause}
}

// redact removes the API key from s.
func (c *Client) redact(s string) string { return provider.Redact(s, c.apiKey) }

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
		return provider.Clip(msg), provider.Clip(code)
	}
	return provider.BodyLine(body), ""
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

// eventError classifies a failure the Responses API reports inside a 200
// stream (a response.failed or an error event) by its code: what says the
// provider failed or was overloaded is retried, what says the request
// itself is wrong is not. what says which event it was.
func (c *Client) eventError(code, msg, what string) *Error {
	if msg == "" {
		msg = "no message"
	}
	e := &Error{Provider: name, Kind: codeKind(code), Message: c.redact(provider.Clip(what + ": " + msg)), Code: c.redact(provider.Clip(code))}
	e.Permanent = code == "insufficient_quota"
	e.ContextTooLong = contextTooLong(e)
	return e
}

// codeKind classifies an error code of the Responses API. A code that is an
// HTTP status reads as that status; an unknown code counts as a failure of
// the provider, so that it is retried a bounded number of times.
func codeKind(code string) error {
	if status, err := strconv.Atoi(code); err == nil && status >= 400 && status < 600 {
		return provider.StatusKind(status)
	}
	switch {
	case code == "rate_limit_exceeded" || code == "insufficient_quota":
		return ErrRateLimited
	case code == "invalid_api_key" || code == "unauthorized":
		return ErrAuth
	case strings.Contains(code, "invalid") || strings.Contains(code, "image") ||
		strings.Contains(code, "policy") || strings.Contains(code, "mismatch") ||
		strings.Contains(code, "context_length") || strings.Contains(code, "not_found") ||
		strings.Contains(code, "unsupported"):
		return ErrBadRequest
	}
	return ErrUnavailable // server_error, vector_store_timeout, none, unknown
}
