package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the API's spans.
const tracerName = "github.com/engine-brain/brain/api"

// requestIDKey is the span attribute of the request's id.
const requestIDKey = attribute.Key("brain.request_id")

// startSpan starts the server span of request r, which the mux's pattern
// matched ("" for none), a child of the trace the client sent (traceparent)
// if any. It returns the request's context with the span: the context the
// handlers pass to the Backend, so that a message carries the trace into
// the inbox.
func (s *Server) startSpan(r *http.Request, pattern, id string) (context.Context, trace.Span) {
	ctx := s.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	method, known := knownMethod(r.Method)
	attrs := []attribute.KeyValue{
		semconv.HTTPRequestMethodKey.String(method),
		semconv.URLPath(r.URL.Path),
		semconv.URLScheme(scheme(r)),
		requestIDKey.String(id),
	}
	if !known {
		attrs = append(attrs, semconv.HTTPRequestMethodOriginal(r.Method))
	}
	name := method
	if pattern != "" {
		// Every pattern is "<method> <path>": the span's name, as the
		// conventions want it, and its path part the http.route.
		name = pattern
		attrs = append(attrs, semconv.HTTPRoute(pattern[strings.IndexByte(pattern, ' ')+1:]))
	} else if !known {
		name = "HTTP"
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	return s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// endSpan records the answer's status on span and ends it. A server span
// is an error only for a 5xx: a 4xx is the client's mistake.
func endSpan(span trace.Span, status int) {
	span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	if status >= 500 {
		span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(status)))
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// knownMethod returns m if the HTTP conventions know it, else "_OTHER", so
// that a client cannot mint span names.
func knownMethod(m string) (string, bool) {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m, true
	}
	return "_OTHER", false
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
