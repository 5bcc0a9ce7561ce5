package rounds

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
)

// scope names brain's instrumentation, as the node's spans do.
const scope = "github.com/engine-brain/brain"

// startTool starts the span of tool call c (the GenAI convention's
// execute_tool), a child of the span in ctx, the turn's. Its tracer is the
// turn span's own: the engine takes no telemetry configuration, and a turn
// with no recording span (offline play, tracing off) costs nothing here.
// The call's tool runs with the returned context, so that what it posts (a
// worker's task) and sends (an MCP request) carries the call's span.
func startTool(ctx context.Context, c conversation.ToolCall) (context.Context, trace.Span) {
	turn := trace.SpanFromContext(ctx)
	if !turn.IsRecording() {
		return ctx, noop.Span{}
	}
	return turn.TracerProvider().Tracer(scope).Start(ctx, "execute_tool "+c.Name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName(c.Name),
			semconv.GenAIToolCallID(c.ID),
			semconv.GenAIToolType("function"),
		))
}

// endTool ends the span of a tool call whose result is res: an error
// result is the span's error (error.type tool_error; the result's text
// stays out of the span, as tool results may hold what users wrote).
func endTool(span trace.Span, res tools.Result) {
	if res.IsError {
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, "the tool returned an error result")
	}
	span.End()
}
