package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// modelObserver records the node's model calls: their spans, the node's
// Prometheus metrics and the GenAI conventions' client metrics.
type modelObserver struct {
	tracer   trace.Tracer
	capture  bool // Config.CaptureMessageContent
	metrics  *Metrics
	duration genaiconv.ClientOperationDuration
	tokens   genaiconv.ClientTokenUsage
}

// newModelObserver makes the observer of cfg (its defaults set), with the
// GenAI metrics' buckets the conventions advise.
func newModelObserver(cfg Config) (*modelObserver, error) {
	meter := cfg.MeterProvider.Meter(scope)
	duration, err := genaiconv.NewClientOperationDuration(meter, metric.WithExplicitBucketBoundaries(
		0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	if err != nil {
		return nil, fmt.Errorf("gen_ai.client.operation.duration: %w", err)
	}
	tokens, err := genaiconv.NewClientTokenUsage(meter, metric.WithExplicitBucketBoundaries(
		1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	if err != nil {
		return nil, fmt.Errorf("gen_ai.client.token.usage: %w", err)
	}
	return &modelObserver{tracer: cfg.TracerProvider.Tracer(scope), capture: cfg.CaptureMessageContent, metrics: cfg.Metrics,
		duration: duration, tokens: tokens}, nil
}

// wrap wraps a candidate model of the recipe's provider so that each of
// its calls is a span (the GenAI convention's chat), timed and counted.
func (o *modelObserver) wrap(provider string, model llm.Model) llm.Model {
	return observedModel{Model: model, provider: provider, obs: o}
}

type observedModel struct {
	llm.Model
	provider string // as the recipe names it: "default" or a provider's name
	obs      *modelObserver
}

func (o observedModel) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		c := o.start(ctx, req)
		defer c.end()
		for p, err := range o.Model.Generate(c.ctx, req) {
			c.observe(p, err)
			if !yield(p, err) {
				return
			}
		}
	}
}

// modelCall is one call of an observedModel, from its start to its end.
type modelCall struct {
	o       observedModel
	ctx     context.Context // the call's: its span, its retry observer
	span    trace.Span
	req     *llm.Request
	start   time.Time
	first   time.Duration // to the first text or tool call; 0 before it
	retries int
	usage   llm.Usage
	finish  []string
	err     error
	answer  *answer // collected when content is captured
}

func (o observedModel) start(ctx context.Context, req *llm.Request) *modelCall {
	c := &modelCall{o: o, req: req, start: time.Now()}
	name := "chat"
	if req.Params.Model != "" {
		name += " " + req.Params.Model
	}
	c.ctx, c.span = o.obs.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
	if c.span.IsRecording() { // attributes cost even when nothing records them
		c.span.SetAttributes(semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(o.provider))
		if req.Params.Model != "" {
			c.span.SetAttributes(semconv.GenAIRequestModel(req.Params.Model))
		}
		if req.Params.MaxTokens > 0 {
			c.span.SetAttributes(semconv.GenAIRequestMaxTokens(req.Params.MaxTokens))
		}
		if t := req.Params.Temperature; t != nil {
			c.span.SetAttributes(semconv.GenAIRequestTemperature(*t))
		}
		if o.obs.capture {
			c.span.SetAttributes(inputContent(req)...)
			c.answer = &answer{}
		}
	}
	c.ctx = provider.WithRetryObserver(c.ctx, c.retried)
	return c
}

// retried notes that the adapter retries the call after attempt failed.
func (c *modelCall) retried(attempt int, err error) {
	c.retries++
	c.span.AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", attempt), semconv.ErrorTypeKey.String(errorKind(err))))
}

// observe notes part p of the answer, or err.
func (c *modelCall) observe(p llm.Part, err error) {
	if err != nil {
		c.err = err
		return
	}
	switch p.Kind {
	case llm.PartText, llm.PartToolCall:
		if c.first == 0 {
			c.first = time.Since(c.start)
		}
	case llm.PartUsage:
		if p.Usage != nil {
			c.usage.Add(*p.Usage)
		}
	case llm.PartFinish:
		c.finish = append(c.finish, finishReason(p.Finish))
	}
	if c.answer != nil {
		c.answer.add(p)
	}
}

// end records the call in the node's Prometheus metrics, the GenAI
// metrics and its span, which it ends.
func (c *modelCall) end() {
	elapsed := time.Since(c.start)
	// The model that answered, as its usage says, when the request named
	// none (the provider's default).
	model := cmp.Or(c.req.Params.Model, c.usage.Model)
	kind := ""
	if c.err != nil {
		kind = errorKind(c.err)
	}
	c.o.obs.metrics.observeModelCall(c.o.provider, model, elapsed, c.first, c.retries, c.usage, kind)

	// The GenAI conventions name the configured provider that answered.
	prov := genaiconv.ProviderNameAttr(cmp.Or(c.usage.Provider, c.o.provider))
	var attrs []attribute.KeyValue
	if model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(model))
	}
	g := c.o.obs
	if c.usage.InputTokens+c.usage.OutputTokens > 0 {
		g.tokens.Record(c.ctx, int64(c.usage.InputTokens), genaiconv.OperationNameChat, prov, genaiconv.TokenTypeInput, attrs...)
		g.tokens.Record(c.ctx, int64(c.usage.OutputTokens), genaiconv.OperationNameChat, prov, genaiconv.TokenTypeOutput, attrs...)
	}
	if kind != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(kind))
	}
	g.duration.Record(c.ctx, elapsed.Seconds(), genaiconv.OperationNameChat, prov, attrs...)

	if c.span.IsRecording() {
		c.endSpan(model, string(prov), kind)
	}
	c.span.End()
}

// endSpan sets what the call's span learnt by its end.
func (c *modelCall) endSpan(model, prov, kind string) {
	s := c.span
	s.SetAttributes(semconv.GenAIProviderNameKey.String(prov))
	if c.req.Params.Model == "" && model != "" {
		s.SetName("chat " + model)
		s.SetAttributes(semconv.GenAIRequestModel(model))
	}
	if c.usage.InputTokens+c.usage.OutputTokens > 0 {
		s.SetAttributes(semconv.GenAIUsageInputTokens(c.usage.InputTokens), semconv.GenAIUsageOutputTokens(c.usage.OutputTokens))
	}
	if len(c.finish) > 0 {
		s.SetAttributes(semconv.GenAIResponseFinishReasons(c.finish...))
	}
	if c.answer != nil {
		finish := "error"
		if c.err == nil && len(c.finish) > 0 {
			finish = c.finish[len(c.finish)-1]
		}
		s.SetAttributes(c.answer.attribute(finish))
	}
	if kind != "" {
		s.SetAttributes(semconv.ErrorTypeKey.String(kind))
		s.SetStatus(codes.Error, c.err.Error())
	}
}

// errorKind is the kind of a failed model call, from llm's sentinels: the
// kind label of brain_model_errors_total and the error.type of its span.
func errorKind(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, llm.ErrRateLimited):
		return "rate_limit"
	case errors.Is(err, llm.ErrAuth):
		return "auth"
	case errors.Is(err, llm.ErrContextTooLong): // an ErrBadRequest
		return "context_length"
	case errors.Is(err, llm.ErrPayload): // an ErrBadRequest
		return "payload"
	case errors.Is(err, llm.ErrBadRequest):
		return "bad_request"
	case errors.Is(err, llm.ErrUnavailable):
		return "server"
	}
	return "other"
}
