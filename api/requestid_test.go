package api

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A well-formed X-Request-ID is taken, a missing or malformed one replaced
// by a new one; the answer, every log line of the request and its span
// carry the id used.
func TestRequestID(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("r", maxRequestID)
	tests := []struct {
		name string
		sent string // "" sends none
		take bool
	}{
		{name: "none", sent: ""},
		{name: "well-formed", sent: "req-42 from the CLI", take: true},
		{name: "longest", sent: long, take: true},
		{name: "too long", sent: long + "r"},
		{name: "control character", sent: "req\x1b[31m"},
		{name: "not ASCII", sent: "req-é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spans := tracetest.NewSpanRecorder()
			b := setup(t, func(c *Config) { c.TracerProvider = trace.NewTracerProvider(trace.WithSpanProcessor(spans)) })
			header := map[string]string{}
			if tt.sent != "" {
				header[RequestIDHeader] = tt.sent
			}
			// A deletion writes a line of its own before the access log's.
			w := b.do("DELETE", "/v1/processes/p_bob", tokOlga, header, "")
			if w.Code != 200 {
				t.Fatalf("delete: %d %s", w.Code, w.Body)
			}
			id := w.Header().Get(RequestIDHeader)
			switch {
			case tt.take && id != tt.sent:
				t.Errorf("answer's %s = %q, want the client's %q", RequestIDHeader, id, tt.sent)
			case !tt.take && (id == tt.sent || !validRequestID(id)):
				t.Errorf("answer's %s = %q, want a new well-formed id", RequestIDHeader, id)
			}

			var got []string
			for _, e := range b.logs.All() {
				got = append(got, e.Message+" "+str(e.ContextMap()["request_id"]))
			}
			want := []string{"process deleted " + id, "request " + id}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("log lines and their request_id (-want +got):\n%s", diff)
			}

			ended := spans.Ended()
			if len(ended) != 1 {
				t.Fatalf("%d spans, want 1", len(ended))
			}
			if v := attrs(ended[0])["brain.request_id"]; v != id {
				t.Errorf("span's brain.request_id = %v, want %q", v, id)
			}
		})
	}
}

// Each request without an id gets its own.
func TestRequestIDsDiffer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.do("GET", "/healthz", "", nil, "").Header().Get(RequestIDHeader)
	second := b.do("GET", "/healthz", "", nil, "").Header().Get(RequestIDHeader)
	if first == "" || first == second {
		t.Errorf("ids %q and %q, want two different ones", first, second)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
