package node

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

// BenchmarkTelemetryNoop measures what the spans and metrics of one turn
// with one model call cost a node whose OpenTelemetry providers are no-ops
// (no SDK installed): observed against a bare model call.
func BenchmarkTelemetryNoop(b *testing.B) {
	cfg := Config{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider(),
		Metrics: NewMetrics(prometheus.NewRegistry())}
	obs, err := newModelObserver(cfg)
	if err != nil {
		b.Fatal(err)
	}
	n := &Node{tracer: cfg.TracerProvider.Tracer(scope)}
	claim := &store.Claim{Record: store.Record{ID: "p1", Recipe: "ford"}, TurnID: "t1",
		TraceParents: []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	bare := partsModel{{Kind: llm.PartText, Text: "hi"}, {Kind: llm.PartFinish, Finish: llm.FinishStop}}
	req := &llm.Request{Params: llm.Params{Model: "m"}}
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := llm.Collect(bare.Generate(context.Background(), req)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("observed", func(b *testing.B) {
		model := obs.wrap("default", bare)
		b.ReportAllocs()
		for b.Loop() {
			ctx, span := n.traceTurn(context.Background(), claim, time.Now())
			if _, err := llm.Collect(model.Generate(ctx, req)); err != nil {
				b.Fatal(err)
			}
			turnEnded(ctx, "await_user", nil)
			span.End()
		}
	})
}
