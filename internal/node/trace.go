package node

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/engine-brain/brain/store"
)

// scope names brain's instrumentation in traces and metrics.
const scope = "github.com/engine-brain/brain"

// Attributes of brain's own on the spans of turns.
const (
	attrProcess = attribute.Key("brain.process.id")
	attrTurn    = attribute.Key("brain.turn.id")
	// attrOutcome is how the turn ended: its lifecycle event (await_user,
	// continue, finish, fail), or abandoned (left to be recovered).
	attrOutcome   = attribute.Key("brain.turn.outcome")
	attrRecovered = attribute.Key("brain.turn.recovered")
)

// traceTurn starts the span of claim's turn (the GenAI convention's
// invoke_agent; the recipe is the agent), begun at start, before its claim.
// A turn starts a trace of its own and links to the spans that posted what
// it drained (an API request, a parent's spawn_worker call, a worker's last
// turn), on whichever node they ran: a message may wait in an inbox for
// long, and a turn drains many. Attributes and links are added once the
// span records: when nothing does (no SDK), they cost nothing.
func (n *Node) traceTurn(ctx context.Context, claim *store.Claim, start time.Time) (context.Context, trace.Span) {
	rec := claim.Record
	ctx, span := n.tracer.Start(ctx, "invoke_agent "+rec.Recipe,
		trace.WithNewRoot(), trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal))
	if !span.IsRecording() {
		return ctx, span
	}
	span.SetAttributes(
		semconv.GenAIOperationNameInvokeAgent,
		semconv.GenAIAgentName(rec.Recipe),
		semconv.GenAIConversationID(rec.ID),
		attrProcess.String(rec.ID),
		attrTurn.String(claim.TurnID),
		attrRecovered.Bool(claim.Recovered),
	)
	for _, tp := range claim.TraceParents {
		if sc := spanContextOf(tp); sc.IsValid() {
			span.AddLink(trace.Link{SpanContext: sc})
		}
	}
	return ctx, span
}

// turnEnded notes on the span of the turn in ctx how the turn ended, and
// err, when it ended because of one.
func turnEnded(ctx context.Context, outcome string, err error) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrOutcome.String(outcome))
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeOther)
		span.SetStatus(codes.Error, err.Error())
	}
}

// traceParent is the W3C traceparent of the span in ctx, "" without one:
// what a message posted with ctx carries (inbox.Message.TraceParent).
func traceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// spanContextOf reads a W3C traceparent; an invalid one gives an invalid
// span context.
func spanContextOf(traceparent string) trace.SpanContext {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	return trace.SpanContextFromContext(ctx)
}
