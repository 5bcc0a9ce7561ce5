package providers

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
)

// tracedClient is the HTTP client of a Set's adapters: each attempt of a
// model call is a client span (the global TracerProvider's, a no-op unless
// the program installed an SDK) and carries the W3C traceparent of the
// call's span, so that a provider's own traces join the node's. W3C
// whatever the global propagator: it is the format brain's inboxes carry.
func tracedClient() *http.Client {
	return &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport, otelhttp.WithPropagators(propagation.TraceContext{}))}
}
