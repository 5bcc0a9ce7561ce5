package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestError(t *testing.T) {
	t.Parallel()
	cause := errors.New("dial tcp: refused")
	tests := []struct {
		err       *Error
		want      string
		retryable bool
	}{
		{&Error{Provider: "openai", Kind: ErrRateLimited, StatusCode: 429, Message: "Rate limit reached", Code: "rate_limit_exceeded"}, "openai: rate limited (HTTP 429): Rate limit reached [rate_limit_exceeded]", true},
		{&Error{Provider: "anthropic", Kind: ErrUnavailable, StatusCode: 529, Message: "Overloaded", Code: "overloaded_error"}, "anthropic: provider unavailable (HTTP 529): Overloaded [overloaded_error]", true},
		{&Error{Provider: "openai", Kind: ErrRateLimited, Message: "quota: insufficient_quota", Code: "insufficient_quota", Permanent: true}, "openai: rate limited: quota: insufficient_quota", false},
		{&Error{Provider: "x", Kind: ErrAuth}, "x: authentication failed", false},
		{&Error{Provider: "x", Kind: ErrUnavailable, Message: "the connection failed", Err: cause}, "x: provider unavailable: the connection failed", true},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if got := tt.err.Retryable(); got != tt.retryable {
			t.Errorf("%q: Retryable() = %v, want %v", tt.want, got, tt.retryable)
		}
		if !errors.Is(tt.err, tt.err.Kind) {
			t.Errorf("%q does not wrap its kind", tt.want)
		}
	}
	if err := (&Error{Kind: ErrUnavailable, Err: cause}); !errors.Is(err, cause) {
		t.Errorf("%v does not wrap its cause", err)
	}
	tooLong := &Error{Provider: "x", Kind: ErrBadRequest, StatusCode: 400, Message: "prompt is too long", ContextTooLong: true, Err: cause}
	if !errors.Is(tooLong, ErrContextTooLong) || !errors.Is(tooLong, ErrBadRequest) || !errors.Is(tooLong, cause) || tooLong.Retryable() {
		t.Errorf("%v: want a bad request, too long, with its cause, not retried", tooLong)
	}
	if err := (&Error{Kind: ErrUnavailable, ContextTooLong: true}); errors.Is(err, ErrContextTooLong) {
		t.Errorf("%v: only a refused request is too long", err)
	}
	if err := (&Error{Kind: ErrBadRequest}); errors.Is(err, ErrContextTooLong) {
		t.Errorf("%v: a bad request is not too long unless marked", err)
	}
	if err := Refused("p", cause, "tools[0]: %v", cause); !errors.Is(err, ErrBadRequest) || !errors.Is(err, cause) || err.Error() != "p: request refused: tools[0]: dial tcp: refused" {
		t.Errorf("Refused = %q", err)
	}
}

func TestStatusKind(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]error{
		400: ErrBadRequest, 404: ErrBadRequest, 413: ErrBadRequest,
		401: ErrAuth, 403: ErrAuth,
		429: ErrRateLimited,
		408: ErrUnavailable, 500: ErrUnavailable, 503: ErrUnavailable, 529: ErrUnavailable,
	} {
		if got := StatusKind(status); got != want {
			t.Errorf("StatusKind(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestClipAndRedact(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", MaxMessage) // two bytes a rune
	got := Clip(long)
	if !strings.HasSuffix(got, "…") || len(got) > MaxMessage+len("…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("Clip cut %d bytes badly", len(got))
	}
	if got := Clip("  short \n"); got != "short" {
		t.Errorf("Clip = %q, want %q", got, "short")
	}
	if got := Redact("bad key sk-123 given", "sk-123"); got != "bad key [redacted] given" {
		t.Errorf("Redact = %q", got)
	}
	if got := Redact("as is", ""); got != "as is" {
		t.Errorf("Redact with no key = %q", got)
	}
}

func TestBodyLine(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"  upstream timed out\nretry later": "upstream timed out",
		"<html><body>502</body></html>":     "",
		"":                                  "",
	} {
		if got := BodyLine([]byte(body)); got != want {
			t.Errorf("BodyLine(%q) = %q, want %q", body, got, want)
		}
	}
}

func TestStreamFailure(t *testing.T) {
	t.Parallel()
	var syntax error = &json.SyntaxError{Offset: 3}
	tests := []struct {
		err      error
		answered bool
		want     string
	}{
		{fmt.Errorf("decode: %w", syntax), true, "the stream sent an event that is not valid JSON"},
		{errors.New("read sk-secret: connection reset"), true, "the stream was cut: read [redacted]: connection reset"},
		{errors.New("dial sk-secret: refused"), false, "the connection failed: dial [redacted]: refused"},
	}
	for _, tt := range tests {
		e := StreamFailure("x", "sk-secret", tt.err, tt.answered, "an event")
		if e.Message != tt.want || !errors.Is(e, ErrUnavailable) || !errors.Is(e, tt.err) || !e.Retryable() {
			t.Errorf("StreamFailure(%v, answered %v) = %q (%v), want %q, unavailable, wrapping the cause", tt.err, tt.answered, e.Message, e, tt.want)
		}
	}
}
