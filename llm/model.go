package llm

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/engine-brain/brain/conversation"
)

// Model is one configured model of one provider. Implementations are
// immutable and safe for concurrent use: every call carries its whole
// request.
type Model interface {
	// Generate streams the model's answer to req. The stream ends after a
	// PartFinish, or early with a non-nil error.
	Generate(ctx context.Context, req *Request) iter.Seq2[Part, error]
}

// Request is everything a model call needs.
type Request struct {
	System   string
	Messages []conversation.Message
	Tools    []ToolDef
	Params   Params
}

// ToolDef describes a tool the model may call.
type ToolDef struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the tool's arguments (an object).
	Schema json.RawMessage
}

// Params are the recipe's model settings.
type Params struct {
	Model       string
	Temperature *float64
	MaxTokens   int
	// HostedTools are tools the provider runs itself, e.g. "web_search".
	HostedTools []string
}

// PartKind says what a Part carries.
type PartKind string

// Part kinds.
const (
	PartText      PartKind = "text"      // Text is a delta of the answer
	PartReasoning PartKind = "reasoning" // Reasoning is one whole block
	PartToolCall  PartKind = "tool_call" // ToolCall is one complete call
	// PartToolArgs is a fragment of a tool call's arguments as they
	// stream, before the complete PartToolCall: ToolCall.ID and Name say
	// whose (set on every fragment) and ToolCall.Arguments holds the
	// fragment, raw JSON text (the fragments of a call, joined, are its
	// arguments). For showing progress only: Collect ignores them. A
	// provider that sends calls whole (Gemini) yields none, and a call
	// that failed after fragments alone may be tried again (see
	// Part.Progress): the new attempt streams its calls from their first
	// fragment, under the ids it gives them.
	PartToolArgs PartKind = "tool_args"
	PartUsage    PartKind = "usage"  // Usage counts tokens
	PartFinish   PartKind = "finish" // Finish says why the answer ended
	// PartHosted is one state of work the provider ran itself (a web
	// search): started, then completed or failed, linked by ActivityID.
	PartHosted PartKind = "hosted"
	// PartCitation is a source the answer cites. Its Range, when set, is a
	// byte span of the answer's text as collected (all text deltas joined);
	// adapters convert the provider's offsets.
	PartCitation PartKind = "citation"
)

// Part is one element of a streamed answer.
type Part struct {
	Kind      PartKind
	Text      string
	Reasoning *conversation.Reasoning
	ToolCall  *conversation.ToolCall
	Usage     *Usage
	Finish    FinishReason
	Hosted    *conversation.HostedActivity
	Citation  *conversation.Citation
}

// Progress reports whether p only shows how the answer is coming
// (PartToolArgs) and is not part of it. Collect leaves it out, and a call
// that failed after progress alone has delivered nothing: an adapter may
// retry it and a Fallback may ask its next model, as before any part.
func (p Part) Progress() bool { return p.Kind == PartToolArgs }

// FinishReason says why a model stopped.
type FinishReason string

// Finish reasons.
const (
	FinishStop      FinishReason = "stop"
	FinishToolCalls FinishReason = "tool_calls"
	FinishLength    FinishReason = "length"
	FinishFiltered  FinishReason = "content_filter"
)

// Usage counts the tokens of one model call.
type Usage struct {
	// Provider and Model say who answered, when the caller's model set
	// them (brain's node does, for each candidate of a fallback chain): the
	// configured provider's name and the model name it was asked for (""
	// for its default). Empty Provider: not said.
	Provider, Model string
	InputTokens     int
	OutputTokens    int
	// Hosted counts the provider-hosted requests billed apart from tokens,
	// by activity name, e.g. {"web_search": 2}.
	Hosted map[string]int
}

// Add adds o's counts to u.
func (u *Usage) Add(o Usage) {
	if o.Provider != "" {
		u.Provider, u.Model = o.Provider, o.Model
	}
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	for name, n := range o.Hosted {
		if u.Hosted == nil {
			u.Hosted = make(map[string]int, len(o.Hosted))
		}
		u.Hosted[name] += n
	}
}
