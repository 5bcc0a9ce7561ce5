package api

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// requestCounts returns the requests the duration histogram of reg counted,
// by "route code".
func requestCounts(t *testing.T, reg prometheus.Gatherer) map[string]uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := make(map[string]uint64)
	for _, f := range families {
		if f.GetName() != "brain_http_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := make(map[string]string)
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			counts[labels["route"]+" "+labels["code"]] = m.GetHistogram().GetSampleCount()
		}
	}
	return counts
}

// The duration histogram counts requests by route pattern and code, the
// paths no pattern matched under one "unmatched".
func TestHTTPMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	b := setup(t, func(c *Config) { c.Registerer = reg })
	for _, req := range []struct{ method, path, token string }{
		{"GET", "/v1/processes/p_alice", tokAlice},
		{"GET", "/v1/processes/p_done", tokAlice},
		{"GET", "/v1/processes/p_nobody", tokAlice},
		{"GET", "/v1/processes/p_alice", "tok-wrong"},
		{"GET", "/v1/nowhere", tokAlice},
		{"GET", "/wp-login.php", tokAlice},
		{"PUT", "/v1/processes/p_alice", tokOlga},
		{"GET", "/healthz", ""},
	} {
		b.do(req.method, req.path, req.token, nil, "")
	}
	want := map[string]uint64{
		"GET /v1/processes/{id} 200": 2,
		"GET /v1/processes/{id} 404": 1,
		"GET /v1/processes/{id} 401": 1,
		"unmatched 404":              2,
		"unmatched 405":              1,
		"GET /healthz 200":           1,
	}
	if diff := cmp.Diff(want, requestCounts(t, reg)); diff != "" {
		t.Errorf("requests by route and code (-want +got):\n%s", diff)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP brain_http_requests_in_flight Requests being served, open event streams included.
# TYPE brain_http_requests_in_flight gauge
brain_http_requests_in_flight 0
`), "brain_http_requests_in_flight"); err != nil {
		t.Error(err)
	}
}

// An open event stream is a request in flight until it ends.
func TestStreamInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ts := serve(t, b)
	sse := openSSE(t, ts, "/v1/processes/p_alice/events/stream", tokAlice, nil)
	if n := testutil.ToFloat64(b.srv.httpMetrics.inFlight); n != 1 {
		t.Errorf("%v requests in flight while the stream is open, want 1", n)
	}
	sse.resp.Body.Close()
	ts.Close() // waits for the handler to return
	if n := testutil.ToFloat64(b.srv.httpMetrics.inFlight); n != 0 {
		t.Errorf("%v requests in flight after the stream, want 0", n)
	}
}

// brain_redis_unavailable_total{source="api"} counts the answers that are
// 503 because Redis could not serve, and no other failure; the node may
// have registered the family first, for its own source.
func TestRedisUnavailableCounted(t *testing.T) {
	t.Parallel()
	refused := fmt.Errorf("store: get: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	tests := []struct {
		name       string
		fail       error
		nodeFirst  bool
		wantStatus int
		want       string
	}{
		{name: "Redis down", fail: refused, wantStatus: 503, want: `brain_redis_unavailable_total{source="api"} 2`},
		{name: "Redis down, the node registered first", fail: refused, nodeFirst: true, wantStatus: 503,
			want: "brain_redis_unavailable_total{source=\"api\"} 2\nbrain_redis_unavailable_total{source=\"node\"} 1"},
		{name: "another failure", fail: errors.New("boom"), wantStatus: 500, want: `brain_redis_unavailable_total{source="api"} 0`},
		{name: "no failure", wantStatus: 200, want: `brain_redis_unavailable_total{source="api"} 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			if tt.nodeFirst {
				node := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brain_redis_unavailable_total", Help: redisUnavailableHelp}, []string{"source"})
				reg.MustRegister(node)
				node.WithLabelValues("node").Inc()
			}
			b := setup(t, func(c *Config) { c.Registerer = reg })
			b.fake.setFail(tt.fail)
			for range 2 {
				if w := b.do("GET", "/v1/processes", tokOlga, nil, ""); w.Code != tt.wantStatus {
					t.Fatalf("list: %d %s, want %d", w.Code, w.Body, tt.wantStatus)
				}
			}
			want := "# HELP brain_redis_unavailable_total " + redisUnavailableHelp + "\n# TYPE brain_redis_unavailable_total counter\n" + tt.want + "\n"
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "brain_redis_unavailable_total"); err != nil {
				t.Error(err)
			}
		})
	}
}

// A registry that has the API's metrics already refuses a second API's.
func TestHTTPMetricsRegisteredOnce(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	setup(t, func(c *Config) { c.Registerer = reg })
	if _, err := New(Config{Backend: newFake(), Registerer: reg}); err == nil {
		t.Error("a second server registered its metrics on the same registry")
	}
}
