package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

// While a node's Redis is down every route that needs it answers 503 with
// Retry-After, and /readyz stays 200 saying so; once Redis is back, so is
// the API.
func TestRedisOutage(t *testing.T) {
	t.Parallel()
	rs := testutil.StartRedisWith(t, redisserver.Options{AppendOnly: true}) // the process outlives the restart
	// One try a command, so that each request of the outage fails at once;
	// pools larger than the failed dials, so that the client starts no
	// redialing goroutine that outlives the test (goleak).
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1, DialerRetries: 1, PoolSize: 100, PipelinePoolSize: 100})
	t.Cleanup(func() { _ = rdb.Close() })
	node, err := brain.New(brain.Config{Redis: rdb, Recipes: recipes.Builtin(),
		Models: map[string]llm.Model{"default": scripted.New(&scripted.Script{})}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv, err := New(Config{Backend: node, Registerer: reg,
		Tokens: []Token{{Name: "olga", Role: RoleOperator, SHA256: HashToken("tok-olga")}}})
	if err != nil {
		t.Fatal(err)
	}
	h := checked(t, srv)
	do := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok-olga")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	w := do("POST", "/v1/processes", `{"recipe": "default"}`)
	if w.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	p := "/v1/processes/" + strings.TrimPrefix(w.Header().Get("Location"), "/v1/processes/")

	rs.Shutdown(t)
	// Every route of Server.routes but the recipes', which the node keeps
	// in memory.
	routes := []struct{ method, path, body string }{
		{"POST", "/v1/processes", `{"recipe": "default", "input": "hi"}`},
		{"GET", "/v1/processes", ""},
		{"GET", p, ""},
		{"DELETE", p, ""},
		{"POST", p + "/messages", `{"content": "hi"}`},
		{"POST", p + "/steer", `{"content": "hi"}`},
		{"POST", p + "/pause", ""},
		{"POST", p + "/resume", ""},
		{"POST", p + "/stop", ""},
		{"POST", p + "/retry", ""},
		{"GET", p + "/events", ""},
		{"GET", p + "/events/stream", ""},
		{"GET", p + "/inbox", ""},
		{"GET", p + "/timers", ""},
		{"POST", p + "/timers", `{"in": "1h", "message": "wake up"}`},
		{"DELETE", p + "/timers/t_1", ""},
		{"POST", p + "/approvals/call_1", `{"decision": "approve"}`},
		{"GET", "/v1/approvals", ""},
	}
	for _, r := range routes {
		w := do(r.method, r.path, r.body)
		got := []string{http.StatusText(w.Code), errorCode(w.Body.Bytes()), w.Header().Get("Retry-After")}
		if diff := cmp.Diff([]string{"Service Unavailable", CodeUnavailable, "1"}, got); diff != "" {
			t.Errorf("%s %s while Redis is down (-want +got):\n%s", r.method, r.path, diff)
		}
	}
	if n := promtest.ToFloat64(srv.httpMetrics.redisUnavailable); int(n) != len(routes) {
		t.Errorf(`brain_redis_unavailable_total{source="api"} = %v, want %d`, n, len(routes))
	}
	for _, path := range []string{"/v1/recipes", "/v1/recipes/default"} {
		if w := do("GET", path, ""); w.Code != http.StatusOK {
			t.Errorf("GET %s while Redis is down: %d, want 200", path, w.Code)
		}
	}
	if w := do("GET", "/readyz", ""); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"redis":"unavailable"`) {
		t.Errorf("readyz while Redis is down: %d %s, want 200 saying Redis is unavailable", w.Code, w.Body)
	}

	rs.Relaunch(t)
	// The client dials again in the background, about once a second.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(waitTimeout); ; <-tick.C {
		w := do("GET", "/readyz", "")
		if strings.Contains(w.Body.String(), `"redis":"ok"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz once Redis is back: %d %s", w.Code, w.Body)
		}
	}
	if w := do("GET", p, ""); w.Code != http.StatusOK {
		t.Errorf("GET %s once Redis is back: %d %s", p, w.Code, w.Body)
	}
}
