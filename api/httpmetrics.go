package api

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// unmatchedRoute is the route label of a request no pattern matched, so
// that scanners' paths do not each make a series.
const unmatchedRoute = "unmatched"

// redisUnavailableHelp is the help of brain_redis_unavailable_total, which
// must be the same wherever the family is registered.
const redisUnavailableHelp = "Operations that failed because Redis could not serve just now, by source (api: requests answered 503 with Retry-After; node: its own work, retried)."

// httpMetrics are the API's Prometheus metrics. They are always counted and
// registered only when Config.Registerer is set.
type httpMetrics struct {
	duration         *prometheus.HistogramVec // by route and code
	inFlight         prometheus.Gauge
	redisUnavailable prometheus.Counter // answers 503 because Redis could not serve
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "brain_http_request_duration_seconds",
			Help: `Time from a request's arrival to the end of its answer, by route (the pattern, or "unmatched") and status code; an event stream's is its whole life.`,
			// From a cached read to a slow Redis; streams fall in +Inf.
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "brain_http_requests_in_flight",
			Help: "Requests being served, open event streams included.",
		}),
	}
	unavailable := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "brain_redis_unavailable_total",
		Help: redisUnavailableHelp,
	}, []string{"source"})
	if reg != nil {
		if err := errors.Join(reg.Register(m.duration), reg.Register(m.inFlight)); err != nil {
			return nil, err
		}
		shared, err := registerShared(reg, unavailable)
		if err != nil {
			return nil, err
		}
		unavailable = shared
	}
	m.redisUnavailable = unavailable.WithLabelValues("api")
	return m, nil
}

// registerShared registers c on reg, or returns the same family registered
// first by another part of the server (the node may count its own Redis
// failures there, under another source).
func registerShared(reg prometheus.Registerer, c *prometheus.CounterVec) (*prometheus.CounterVec, error) {
	err := reg.Register(c)
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(*prometheus.CounterVec); ok {
			return existing, nil
		}
	}
	return c, err
}

// routeLabel is the route label of a request that pattern matched ("" for
// none).
func routeLabel(pattern string) string {
	if pattern == "" {
		return unmatchedRoute
	}
	return pattern
}

// observe counts one answered request on route (a routeLabel).
func (m *httpMetrics) observe(route string, status int, elapsed time.Duration) {
	m.duration.WithLabelValues(route, strconv.Itoa(status)).Observe(elapsed.Seconds())
}
