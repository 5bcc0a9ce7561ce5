package api

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// attrs returns the attributes of span by key.
func attrs(span sdktrace.ReadOnlySpan) map[string]any {
	m := make(map[string]any)
	for _, kv := range span.Attributes() {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// traceBundle is a server whose spans are recorded, reading traceparent.
func traceBundle(t *testing.T) (*bundle, *tracetest.SpanRecorder) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	b := setup(t, func(c *Config) {
		c.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		c.Propagator = propagation.TraceContext{}
	})
	return b, spans
}

// Every request has a server span named by its route, with the HTTP
// conventions' attributes; only a 5xx is an error.
func TestSpan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		method, path string
		token        string
		fail         error // the backend's
		wantName     string
		wantAttrs    map[string]any
		wantStatus   codes.Code
	}{
		{name: "a route", method: "GET", path: "/v1/processes/p_alice", token: tokAlice, wantName: "GET /v1/processes/{id}",
			wantAttrs: map[string]any{"http.request.method": "GET", "http.route": "/v1/processes/{id}", "url.path": "/v1/processes/p_alice",
				"url.scheme": "http", "user_agent.original": "brain-test/1", "brain.request_id": "r-1", "http.response.status_code": int64(200)}},
		{name: "no route", method: "GET", path: "/v1/nowhere", token: tokAlice, wantName: "GET",
			wantAttrs: map[string]any{"http.request.method": "GET", "url.path": "/v1/nowhere",
				"url.scheme": "http", "user_agent.original": "brain-test/1", "brain.request_id": "r-1", "http.response.status_code": int64(404)}},
		{name: "a method of no standard", method: "BREW", path: "/v1/processes", token: tokAlice, wantName: "HTTP",
			wantAttrs: map[string]any{"http.request.method": "_OTHER", "http.request.method_original": "BREW", "url.path": "/v1/processes",
				"url.scheme": "http", "user_agent.original": "brain-test/1", "brain.request_id": "r-1", "http.response.status_code": int64(405)}},
		{name: "refused", method: "GET", path: "/v1/processes", token: "tok-wrong", wantName: "GET /v1/processes",
			wantAttrs: map[string]any{"http.request.method": "GET", "http.route": "/v1/processes", "url.path": "/v1/processes",
				"url.scheme": "http", "user_agent.original": "brain-test/1", "brain.request_id": "r-1", "http.response.status_code": int64(401)}},
		{name: "a server error", method: "GET", path: "/v1/processes", token: tokOlga, fail: errors.New("boom"), wantName: "GET /v1/processes",
			wantAttrs: map[string]any{"http.request.method": "GET", "http.route": "/v1/processes", "url.path": "/v1/processes",
				"url.scheme": "http", "user_agent.original": "brain-test/1", "brain.request_id": "r-1", "http.response.status_code": int64(500),
				"error.type": "500"},
			wantStatus: codes.Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, spans := traceBundle(t)
			b.fake.setFail(tt.fail)
			b.do(tt.method, tt.path, tt.token, map[string]string{RequestIDHeader: "r-1", "User-Agent": "brain-test/1"}, "")
			ended := spans.Ended()
			if len(ended) != 1 {
				t.Fatalf("%d spans, want 1", len(ended))
			}
			span := ended[0]
			if span.Name() != tt.wantName || span.SpanKind() != trace.SpanKindServer || span.Status().Code != tt.wantStatus {
				t.Errorf("span %q, kind %s, status %s; want %q, server, %s", span.Name(), span.SpanKind(), span.Status().Code, tt.wantName, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.wantAttrs, attrs(span)); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
		})
	}
}

// A client's traceparent is continued: the request's span is its child,
// and the backend gets the request's span in its context, to carry into
// the inbox.
func TestTraceContinued(t *testing.T) {
	t.Parallel()
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	b, spans := traceBundle(t)
	w := b.do("POST", "/v1/processes/p_alice/messages", tokAlice,
		map[string]string{"traceparent": fmt.Sprintf("00-%s-%s-01", traceID, parentID)}, `{"content": "hello"}`)
	if w.Code != http.StatusAccepted {
		t.Fatalf("send: %d %s", w.Code, w.Body)
	}
	ended := spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans, want 1", len(ended))
	}
	span := ended[0]
	got := []string{span.SpanContext().TraceID().String(), span.Parent().SpanID().String(), fmt.Sprint(span.Parent().IsRemote())}
	if diff := cmp.Diff([]string{traceID, parentID, "true"}, got); diff != "" {
		t.Errorf("trace id, parent span id, remote parent (-want +got):\n%s", diff)
	}
	b.fake.mu.Lock()
	posted := b.fake.postedSpan
	b.fake.mu.Unlock()
	if !posted.Equal(span.SpanContext()) {
		t.Errorf("the backend's context has span %s/%s, want the request's %s/%s",
			posted.TraceID(), posted.SpanID(), span.SpanContext().TraceID(), span.SpanContext().SpanID())
	}
	if tid := b.logs.FilterMessage("request").All()[0].ContextMap()["trace_id"]; tid != traceID {
		t.Errorf("access log's trace_id = %v, want %s", tid, traceID)
	}
}

// An event stream's span ends when the stream does, not when its headers
// are sent.
func TestStreamSpanEndsWithTheStream(t *testing.T) {
	t.Parallel()
	b, spans := traceBundle(t)
	ts := serve(t, b)
	sse := openSSE(t, ts, "/v1/processes/p_alice/events/stream", tokAlice, nil)
	if n := len(spans.Started()); n != 1 || len(spans.Ended()) != 0 {
		t.Fatalf("while the stream is open: %d spans started, %d ended; want 1, 0", n, len(spans.Ended()))
	}
	sse.resp.Body.Close()
	ts.Close() // waits for the handler to return
	ended := spans.Ended()
	if len(ended) != 1 || ended[0].Name() != "GET /v1/processes/{id}/events/stream" {
		t.Fatalf("after the stream: %d spans ended, want the stream's", len(ended))
	}
}
