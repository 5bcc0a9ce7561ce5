package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.uber.org/zap"
)

// captureContentEnv is the OpenTelemetry GenAI instrumentations' switch
// for recording prompts and answers in spans: off unless "true", as they
// may hold what users would not have an operator read.
const captureContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// telemetryConfig is what the OTEL_* variables ask of brain serve. The
// exporters and the SDK read the rest themselves (headers, TLS, timeouts,
// compression, OTEL_TRACES_SAMPLER, the batch and export intervals).
type telemetryConfig struct {
	// Traces and Metrics are exported when an OTLP endpoint is set for
	// them, as the OpenTelemetry SDKs of other languages do: nothing is
	// sent, not even to the default localhost:4318, until one is.
	Traces, Metrics bool
	// CaptureContent puts the messages of model calls in their spans.
	CaptureContent bool
}

// readTelemetryConfig reads the OTEL_* variables brain serve decides on.
func readTelemetryConfig(lookupEnv func(string) (string, bool)) (telemetryConfig, error) {
	get := func(k string) string { v, _ := lookupEnv(k); return v }
	c := telemetryConfig{
		Traces:  get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "",
		Metrics: get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "",
	}
	if get("OTEL_SDK_DISABLED") == "true" {
		c.Traces, c.Metrics = false, false
	}
	var errs []error
	for _, k := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		if v := get(k); v != "" && v != "http/protobuf" {
			errs = append(errs, fmt.Errorf("%s=%q: brain exports OTLP over HTTP only; unset it or say http/protobuf", k, v))
		}
	}
	if v := get(captureContentEnv); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", captureContentEnv, v))
		}
		c.CaptureContent = b
	}
	return c, errors.Join(errs...)
}

// telemetry is the OpenTelemetry SDK as brain serve runs it; a nil
// provider is a signal not exported.
type telemetry struct {
	traces  *sdktrace.TracerProvider
	metrics *sdkmetric.MeterProvider
	log     *zap.Logger
}

// startTelemetry builds the providers c asks for and installs them as
// OpenTelemetry's global ones, where the API's and the node's
// instrumentation find them, with the W3C trace context propagator, so
// that a caller's traceparent continues into brain's spans. Every span
// and metric carries the service's name (OTEL_SERVICE_NAME, default
// brain), its version and the node's id.
func startTelemetry(ctx context.Context, c telemetryConfig, nodeID string, log *zap.Logger) (*telemetry, error) {
	t := &telemetry{log: log}
	if !c.Traces && !c.Metrics {
		return t, nil
	}
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName("brain"), semconv.ServiceVersion(binaryVersion()), semconv.ServiceInstanceID(nodeID)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // last: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override
	)
	if err != nil {
		return nil, fmt.Errorf("opentelemetry resource: %w", err)
	}
	// The SDK's own default prints to stderr, outside the JSON log.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("opentelemetry export failed", zap.Error(err))
	}))
	if c.Traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("opentelemetry traces: %w", err)
		}
		t.traces = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		otel.SetTracerProvider(t.traces)
		otel.SetTextMapPropagator(propagation.TraceContext{})
	}
	if c.Metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("opentelemetry metrics: %w", err), t.shutdown(ctx))
		}
		t.metrics = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		otel.SetMeterProvider(t.metrics)
	}
	log.Info("exporting OpenTelemetry over OTLP/HTTP", zap.Bool("traces", c.Traces), zap.Bool("metrics", c.Metrics),
		zap.Bool("capture_content", c.CaptureContent))
	return t, nil
}

// flush sends what is left, within telemetryFlush, and stops the
// exporters. A collector that does not answer costs the last spans, not
// the exit status: the log says so.
func (t *telemetry) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, telemetryFlush)
	defer cancel()
	if err := t.shutdown(ctx); err != nil {
		t.log.Warn("opentelemetry flush failed", zap.Error(err))
	}
}

func (t *telemetry) shutdown(ctx context.Context) error {
	var errs []error
	if t.traces != nil {
		errs = append(errs, t.traces.Shutdown(ctx))
	}
	if t.metrics != nil {
		errs = append(errs, t.metrics.Shutdown(ctx))
	}
	return errors.Join(errs...)
}
