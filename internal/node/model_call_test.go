package node

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/llm"
)

// A model call's span and the GenAI client metrics say who answered, what
// it cost and how it failed.
func TestModelCallTelemetry(t *testing.T) {
	t.Parallel()
	rec, tp := newSpans(t)
	reader := sdkmetric.NewManualReader()
	o, err := newModelObserver(Config{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	answered := partsModel{
		{Kind: llm.PartText, Text: "hi"},
		{Kind: llm.PartUsage, Usage: &llm.Usage{Provider: "openai-eu", Model: "gpt-x", InputTokens: 100, OutputTokens: 7}},
		{Kind: llm.PartFinish, Finish: llm.FinishStop},
	}
	if _, err := llm.Collect(o.wrap("default", answered).Generate(context.Background(), &llm.Request{})); err != nil {
		t.Fatal(err)
	}
	failing := nodetest.FailingModel{Err: fmt.Errorf("openai: %w", llm.ErrRateLimited)}
	_, _ = llm.Collect(o.wrap("default", failing).Generate(context.Background(), &llm.Request{Params: llm.Params{Model: "gpt-y"}}))

	ended := rec.Ended()
	if len(ended) != 2 {
		t.Fatalf("spans %s, want two", names(ended))
	}
	got := []map[string]string{attrs(ended[0]), attrs(ended[1])}
	want := []map[string]string{{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai-eu", "gen_ai.request.model": "gpt-x",
		"gen_ai.usage.input_tokens": "100", "gen_ai.usage.output_tokens": "7", "gen_ai.response.finish_reasons": `["stop"]`,
	}, {
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "default", "gen_ai.request.model": "gpt-y", "error.type": "rate_limit",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span attributes (-want +got):\n%s", diff)
	}
	if ended[0].Name() != "chat gpt-x" || ended[1].Name() != "chat gpt-y" {
		t.Errorf("span names %s, want chat gpt-x, chat gpt-y", names(ended))
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := map[string][]string{} // by instrument: each point's attributes and count or sum
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					points[m.Name] = append(points[m.Name], fmt.Sprintf("%s n=%d", enc(p.Attributes), p.Count))
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					points[m.Name] = append(points[m.Name], fmt.Sprintf("%s sum=%d", enc(p.Attributes), p.Sum))
				}
			}
		}
	}
	wantPoints := map[string][]string{
		"gen_ai.client.operation.duration": {
			"gen_ai.operation.name=chat,gen_ai.provider.name=openai-eu,gen_ai.request.model=gpt-x n=1",
			"error.type=rate_limit,gen_ai.operation.name=chat,gen_ai.provider.name=default,gen_ai.request.model=gpt-y n=1",
		},
		"gen_ai.client.token.usage": {
			"gen_ai.operation.name=chat,gen_ai.provider.name=openai-eu,gen_ai.request.model=gpt-x,gen_ai.token.type=input sum=100",
			"gen_ai.operation.name=chat,gen_ai.provider.name=openai-eu,gen_ai.request.model=gpt-x,gen_ai.token.type=output sum=7",
		},
	}
	if diff := cmp.Diff(wantPoints, points, sortStrings); diff != "" {
		t.Errorf("GenAI metrics (-want +got):\n%s", diff)
	}
}

var sortStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })

func enc(s attribute.Set) string { return s.Encoded(attribute.DefaultEncoder()) }
