package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"
)

// Each request has one access-log line once answered: at info, at debug
// for the probes; with who sent it, never the token or the body.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	const body = `{"content": "the secret plans"}`
	tests := []struct {
		name         string
		method, path string
		token        string
		body         string
		level        zapcore.Level
		want         map[string]any // the line's fields but duration, request_id
	}{
		{name: "a read", method: "GET", path: "/v1/processes/p_alice", token: tokAlice, level: zapcore.InfoLevel,
			want: map[string]any{"method": "GET", "path": "/v1/processes/p_alice", "route": "GET /v1/processes/{id}", "status": int64(200),
				"remote": "192.0.2.1:1234", "by": "user:alice"}},
		{name: "a message", method: "POST", path: "/v1/processes/p_alice/messages", token: tokAlice, body: body, level: zapcore.InfoLevel,
			want: map[string]any{"method": "POST", "path": "/v1/processes/p_alice/messages", "route": "POST /v1/processes/{id}/messages",
				"status": int64(202), "remote": "192.0.2.1:1234", "by": "user:alice"}},
		{name: "an operator", method: "POST", path: "/v1/processes/p_alice/steer", token: tokOlga, body: body, level: zapcore.InfoLevel,
			want: map[string]any{"method": "POST", "path": "/v1/processes/p_alice/steer", "route": "POST /v1/processes/{id}/steer",
				"status": int64(202), "remote": "192.0.2.1:1234", "by": "operator:olga"}},
		{name: "a wrong token", method: "GET", path: "/v1/processes", token: "tok-wrong-secret", level: zapcore.InfoLevel,
			want: map[string]any{"method": "GET", "path": "/v1/processes", "route": "GET /v1/processes", "status": int64(401),
				"remote": "192.0.2.1:1234"}},
		{name: "no route", method: "GET", path: "/v1/nowhere/p_alice", token: tokAlice, level: zapcore.InfoLevel,
			want: map[string]any{"method": "GET", "path": "/v1/nowhere/p_alice", "route": "unmatched", "status": int64(404),
				"remote": "192.0.2.1:1234", "by": "user:alice"}},
		{name: "liveness", method: "GET", path: "/healthz", level: zapcore.DebugLevel,
			want: map[string]any{"method": "GET", "path": "/healthz", "route": "GET /healthz", "status": int64(200), "remote": "192.0.2.1:1234"}},
		{name: "readiness", method: "GET", path: "/readyz", level: zapcore.DebugLevel,
			want: map[string]any{"method": "GET", "path": "/readyz", "route": "GET /readyz", "status": int64(200), "remote": "192.0.2.1:1234"}},
		{name: "scrape", method: "GET", path: "/metrics", level: zapcore.DebugLevel,
			want: map[string]any{"method": "GET", "path": "/metrics", "route": "GET /metrics", "status": int64(404), "remote": "192.0.2.1:1234"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			w := b.do(tt.method, tt.path, tt.token, map[string]string{"Idempotency-Key": "k-1"}, tt.body)
			lines := b.logs.FilterMessage("request").All()
			if len(lines) != 1 {
				t.Fatalf("%d access-log lines, want 1", len(lines))
			}
			line := lines[0]
			got := line.ContextMap()
			if d, ok := got["duration"]; !ok || got["request_id"] != w.Header().Get(RequestIDHeader) {
				t.Errorf("duration %v, request_id %v; want a duration and the answer's id", d, got["request_id"])
			}
			delete(got, "duration")
			delete(got, "request_id")
			want := tt.want
			want["bytes"] = int64(w.Body.Len())
			if line.Level != tt.level {
				t.Errorf("level %s, want %s", line.Level, tt.level)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			logged := logText(b)
			for _, secret := range []string{tokAlice, tokOlga, "tok-wrong-secret", "Bearer", "secret plans"} {
				if strings.Contains(logged, secret) {
					t.Errorf("the log holds %q:\n%s", secret, logged)
				}
			}
		})
	}
}

// An event stream's line is written when it ends, with what it sent.
func TestAccessLogOfAStream(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.appendEvents("p_alice", sampleTurn()...)
	ts := serve(t, b)
	sse := openSSE(t, ts, "/v1/processes/p_alice/events/stream?view=raw", tokOlga, nil)
	sse.events(t, len(sampleTurn()))
	if n := b.logs.FilterMessage("request").Len(); n != 0 {
		t.Fatalf("%d access-log lines while the stream is open, want 0", n)
	}
	sse.resp.Body.Close()
	ts.Close() // waits for the handler to return
	lines := b.logs.FilterMessage("request").All()
	if len(lines) != 1 {
		t.Fatalf("%d access-log lines, want 1", len(lines))
	}
	got := lines[0].ContextMap()
	if got["route"] != "GET /v1/processes/{id}/events/stream" || got["status"] != int64(200) || got["bytes"].(int64) < 100 {
		t.Errorf("the stream's line: %v; want its route, 200 and the bytes of its events", got)
	}
}

// logText is every line b logged, with its fields, as text.
func logText(b *bundle) string {
	var out strings.Builder
	for _, e := range b.logs.All() {
		out.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			s, _ := json.Marshal(v)
			out.WriteString(" " + k + "=" + string(s))
		}
		out.WriteString("\n")
	}
	return out.String()
}
