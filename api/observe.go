package api

import (
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

// exchange is one request as the server observes it: what its access-log
// line, its metrics and its span need once it is answered.
type exchange struct {
	r     *http.Request // as it arrived
	route string        // its routeLabel
	start time.Time
	log   *zap.Logger // with the request's id
	span  trace.Span
	w     *recorder
	who   *identity // once authenticated
}

// begin starts observing request r, which the mux's pattern matched ("" for
// none): its id (the client's, or a new one) on the answer, its span and
// its logger. It returns the exchange and the request the handlers get,
// whose context has the span and the logger.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, pattern string) (*exchange, *http.Request) {
	start := time.Now()
	id := requestID(r.Header.Get(RequestIDHeader))
	w.Header().Set(RequestIDHeader, id)
	ctx, span := s.startSpan(r, pattern, id)
	log := s.log.With(zap.String("request_id", id))
	if sc := span.SpanContext(); sc.IsValid() {
		log = log.With(zap.Stringer("trace_id", sc.TraceID()))
	}
	s.httpMetrics.inFlight.Inc()
	x := &exchange{r: r, route: routeLabel(pattern), start: start, log: log, span: span, w: &recorder{ResponseWriter: w}}
	return x, r.WithContext(withLogger(ctx, log))
}

// end accounts for the answered request, a panicked one too.
func (s *Server) end(x *exchange) {
	elapsed := time.Since(x.start)
	status := x.w.code()
	s.httpMetrics.inFlight.Dec()
	s.httpMetrics.observe(x.route, status, elapsed)
	endSpan(x.span, status)
	s.accessLog(x, status, elapsed)
}
