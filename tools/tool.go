package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/engine-brain/brain/conversation"
)

// Definition describes a tool to the model.
type Definition struct {
	// Name is how the model calls the tool; unique within a [Registry].
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Schema is the JSON Schema of the arguments object. Its top level must
	// be {"type": "object", ...}. Treat it as read-only once registered.
	Schema json.RawMessage
	// Replayable says that running the tool again after a node stopped
	// midway is harmless: it has no effect outside the conversation log
	// (what it shows the user only shows once its result is committed) or
	// it is idempotent. The engine then saves the calls and their results
	// in one step instead of saving each call before it runs.
	Replayable bool
	// Idempotent says that running a call twice with the same
	// [Caller.CallKey] has the effect of running it once (the tool keys
	// its effect by it). A call that a node left without a result is then
	// run again when its turn is resumed, and the model gets the tool's
	// own answer instead of being told that the tool may or may not have
	// run.
	Idempotent bool
}

// Tool is a tool the model can call.
//
// Call receives arguments that the [Registry] has already checked against
// the definition's schema (empty arguments arrive as "{}"). A failure the
// model can fix is best returned as an error result (IsError) or a Go
// error, which the registry turns into one; either way the model reads the
// text, so write it for the model. Call must be safe for concurrent use.
type Tool interface {
	Definition() Definition
	Call(ctx context.Context, args json.RawMessage) (Result, error)
}

// Result is what a tool call returns: MCP-compatible content blocks, each
// optionally addressed to the user or the assistant, whether the call
// failed, and the structured part the tool wants shown to the user, if any.
type Result struct {
	Content []conversation.Block
	IsError bool
	// Presentation, when set on a successful result, is shown to the user
	// beside the result: the engine records it as a presentation event
	// (setting its CallID) after the tool's result. present_results sets
	// it; an error result's is ignored.
	Presentation *conversation.Presentation
}

// Text returns the text of r's blocks, joined by newlines, whatever their
// audience (see [conversation.TextOf]).
func (r Result) Text() string { return conversation.TextOf(r.Content) }

// TextResult returns a successful result of one plain text block addressed
// to everyone.
func TextResult(text string) Result {
	return Result{Content: []conversation.Block{conversation.TextBlock(text)}}
}

// ErrorResult returns a failed result of one plain text block, formatted as
// fmt.Sprintf does. The block is addressed to the assistant: an error
// result tells the model what to fix and is no message for people (the
// user view drops it; the raw view keeps it).
func ErrorResult(format string, a ...any) Result {
	return errorResult(fmt.Sprintf(format, a...))
}

// errorResult is ErrorResult for a message that is not a format.
func errorResult(msg string) Result {
	return Result{Content: []conversation.Block{conversation.TextBlock(msg).For(conversation.RoleAssistant)}, IsError: true}
}

// Func adapts a function to [Tool], as http.HandlerFunc adapts one to
// http.Handler.
type Func struct {
	Def Definition
	Fn  func(ctx context.Context, args json.RawMessage) (Result, error)
}

var _ Tool = Func{}

// Definition returns f.Def.
func (f Func) Definition() Definition { return f.Def }

// Call calls f.Fn.
func (f Func) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	return f.Fn(ctx, args)
}
