package main

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/internal/testutil"
)

func TestReadTelemetryConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want telemetryConfig
	}{
		{name: "nothing set: off", want: telemetryConfig{}},
		{name: "other OTEL_* variables alone: off",
			env: map[string]string{"OTEL_SERVICE_NAME": "brain-eu", "OTEL_EXPORTER_OTLP_HEADERS": "x=1", "OTEL_EXPORTER_OTLP_ENDPOINT": ""}},
		{name: "one endpoint for both", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
			want: telemetryConfig{Traces: true, Metrics: true}},
		{name: "traces only", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"},
			want: telemetryConfig{Traces: true}},
		{name: "metrics only", env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://collector:4318/v1/metrics", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
			want: telemetryConfig{Metrics: true}},
		{name: "SDK disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}},
		{name: "content captured", env: map[string]string{captureContentEnv: "true"}, want: telemetryConfig{CaptureContent: true}},
		{name: "content not captured", env: map[string]string{captureContentEnv: "false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := readTelemetryConfig(envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// Without an endpoint no provider is built, so nothing can be sent, and
// OpenTelemetry's globals stay the no-op ones.
func TestTelemetryOff(t *testing.T) {
	t.Parallel()
	tel, err := startTelemetry(context.Background(), telemetryConfig{}, "n1", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if tel.traces != nil || tel.metrics != nil {
		t.Errorf("providers built without an endpoint: %+v", tel)
	}
	if _, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider); ok {
		t.Error("the SDK's tracer provider is installed")
	}
	tel.flush(context.Background())
}

// otlpReceiver is an OpenTelemetry collector's OTLP/HTTP receiver: it
// keeps what it is sent.
type otlpReceiver struct {
	url     string
	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricpb.ExportMetricsServiceRequest
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var m coltracepb.ExportTraceServiceRequest
		if r.decode(t, w, req, &m, &coltracepb.ExportTraceServiceResponse{}) {
			r.mu.Lock()
			r.traces = append(r.traces, &m)
			r.mu.Unlock()
		}
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var m colmetricpb.ExportMetricsServiceRequest
		if r.decode(t, w, req, &m, &colmetricpb.ExportMetricsServiceResponse{}) {
			r.mu.Lock()
			r.metrics = append(r.metrics, &m)
			r.mu.Unlock()
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// decode reads a protobuf request into m and answers with resp.
func (r *otlpReceiver) decode(t *testing.T, w http.ResponseWriter, req *http.Request, m, resp proto.Message) bool {
	body, err := io.ReadAll(req.Body)
	if err == nil {
		err = proto.Unmarshal(body, m)
	}
	if ct := req.Header.Get("Content-Type"); err != nil || ct != "application/x-protobuf" {
		t.Errorf("%s: %s, %v", req.URL.Path, ct, err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return false
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
	return true
}

// resourceAttrs returns a resource's string attributes.
func resourceAttrs(res *resourcepb.Resource) map[string]string {
	attrs := map[string]string{}
	for _, kv := range res.GetAttributes() {
		attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return attrs
}

// TestTelemetryExport runs brain serve configured by environment variables
// only (OTEL_*, BRAIN_*) against an OTLP/HTTP receiver, for an API request
// that carries a W3C traceparent and a turn: the request's span joins the
// caller's trace, the turn and its model call are spans, the messages are
// in them only when asked, the GenAI metrics are flushed on SIGTERM, and
// everything names the service, its version and the node.
func TestTelemetryExport(t *testing.T) {
	t.Parallel()
	bin := brainBinary(t)
	const (
		traceID = "4bf92f3577b34da6a3ce929e0e4736f1"
		parent  = "00-" + traceID + "-00f067aa0ba902b7-01"
	)
	tests := []struct {
		name        string
		env         []string // {url} is the receiver's
		service     string
		wantTraces  bool
		wantContent bool
		wantMetrics bool
	}{
		{name: "one endpoint", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT={url}"},
			service: "brain", wantTraces: true, wantMetrics: true},
		{name: "traces only, content captured", env: []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={url}/v1/traces", captureContentEnv + "=true"},
			service: "brain", wantTraces: true, wantContent: true},
		{name: "metrics only, another name", env: []string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT={url}/v1/metrics", "OTEL_SERVICE_NAME=brain-eu"},
			service: "brain-eu", wantMetrics: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rs := testutil.StartRedis(t) // its own: nodes of one Redis share the turns
			recv := newOTLPReceiver(t)
			env := []string{"BRAIN_LOG_FORMAT=json", "BRAIN_REDIS=redis://" + rs.Addr, "BRAIN_LISTEN=127.0.0.1:0", "BRAIN_NODE_ID=otel-node"}
			for _, kv := range tt.env {
				env = append(env, strings.ReplaceAll(kv, "{url}", recv.url))
			}
			srv := startBrain(t, bin, t.TempDir(), env, []string{"serve"})

			req, err := http.NewRequest("GET", srv.url+"/v1/processes", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("traceparent", parent)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
			defer cancel()
			c := api.NewClient(srv.url, "")
			p, err := c.CreateProcess(ctx, api.CreateRequest{Recipe: "default", Input: "hello"})
			if err != nil {
				t.Fatal(err)
			}
			followUntilBlocked(ctx, t, c, p.ID, "")
			srv.stop(t) // flushes: the receiver has everything once the process is gone

			recv.mu.Lock()
			defer recv.mu.Unlock()
			wantResource := func(res *resourcepb.Resource) {
				t.Helper()
				attrs := resourceAttrs(res)
				if attrs["service.name"] != tt.service || attrs["service.instance.id"] != "otel-node" || attrs["service.version"] == "" {
					t.Errorf("resource %v, want service.name %s, service.instance.id otel-node and a service.version", attrs, tt.service)
				}
			}
			joined, content := false, false
			var names []string
			for _, req := range recv.traces {
				for _, rs := range req.GetResourceSpans() {
					wantResource(rs.GetResource())
					for _, ss := range rs.GetScopeSpans() {
						for _, span := range ss.GetSpans() {
							names = append(names, span.GetName())
							joined = joined || hex.EncodeToString(span.GetTraceId()) == traceID
							for _, kv := range span.GetAttributes() {
								content = content || kv.GetKey() == "gen_ai.input.messages"
							}
						}
					}
				}
			}
			if got := len(names) > 0; got != tt.wantTraces {
				t.Errorf("spans sent: %v, want %v", got, tt.wantTraces)
			}
			if tt.wantTraces {
				if !joined {
					t.Errorf("no span of the trace %s the request carried", traceID)
				}
				for _, prefix := range []string{"invoke_agent default", "chat"} {
					if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) }) {
						t.Errorf("no span %q… among %q", prefix, names)
					}
				}
			}
			if content != tt.wantContent {
				t.Errorf("messages in spans: %v, want %v", content, tt.wantContent)
			}
			var metrics []string
			for _, req := range recv.metrics {
				for _, rm := range req.GetResourceMetrics() {
					wantResource(rm.GetResource())
					for _, sm := range rm.GetScopeMetrics() {
						for _, m := range sm.GetMetrics() {
							metrics = append(metrics, m.GetName())
						}
					}
				}
			}
			if got := len(recv.metrics) > 0; got != tt.wantMetrics {
				t.Errorf("metrics sent: %v, want %v", got, tt.wantMetrics)
			}
			if tt.wantMetrics && !slices.Contains(metrics, "gen_ai.client.operation.duration") {
				t.Errorf("no gen_ai.client.operation.duration among %q", metrics)
			}
		})
	}
}
