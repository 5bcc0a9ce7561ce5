package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// reasoningFields are the delta fields compatible servers stream reasoning
// in, by preference: reasoning_content (DeepSeek, vLLM, llama.cpp's server,
// LM Studio) and reasoning (Ollama, OpenRouter, newer vLLM).
var reasoningFields = [...]string{"reasoning_content", "reasoning"}

// assembler turns the chunks of one streamed Chat Completions answer into
// parts. Text goes out as it arrives; reasoning is gathered into one block,
// sent when the answer proper starts; tool calls are gathered from their
// deltas, each delta's arguments going out as a fragment as it arrives, and
// sent whole, with usage and the finish reason, by end.
//
// Tool calls are assembled here rather than by the SDK's
// ChatCompletionAccumulator, which refuses a chunk whose id differs from the
// first one's and gives no way to skip a delta it cannot place: compatible
// servers do both, and one odd chunk must not lose an answer.
type assembler struct {
	reasoning strings.Builder
	calls     []*callDraft         // in order of first appearance
	byIndex   map[int64]*callDraft // the call each delta index is building
	usage     *llm.Usage
	finish    string // the provider's finish reason; "" until it is sent
}

// callDraft is a tool call being assembled.
type callDraft struct {
	id, name string
	pos      int // its place among the answer's calls
	args     strings.Builder
	// streamed says a fragment of the arguments went out: the call keeps
	// the id it went out under, even should the server name it later.
	streamed bool
}

// newCall starts the draft of the next call of calls.
func newCall(calls *[]*callDraft) *callDraft {
	c := &callDraft{pos: len(*calls)}
	*calls = append(*calls, c)
	return c
}

// callID is the server's id of the call, or one made up from its place:
// the engine pairs results by id.
func (c *callDraft) callID() string {
	if c.id == "" {
		return fmt.Sprintf("call_%d", c.pos)
	}
	return c.id
}

// fragment adds s to the call's arguments and returns it as a fragment
// part; nothing for "".
func (c *callDraft) fragment(s string) []llm.Part {
	if s == "" {
		return nil
	}
	c.args.WriteString(s)
	c.streamed = true
	return []llm.Part{{Kind: llm.PartToolArgs, ToolCall: &conversation.ToolCall{ID: c.callID(), Name: c.name, Arguments: json.RawMessage(s)}}}
}

// part is the finished call.
func (c *callDraft) part() llm.Part {
	// Arguments go on exactly as sent, valid JSON or not: the engine tells
	// the model when they are not.
	args := c.args.String()
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	return llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: c.callID(), Name: c.name, Arguments: json.RawMessage(args)}}
}

// add takes one chunk and returns the parts it completes, in order.
// Anything it does not know (other choices, audio, logprobs, new fields) is
// skipped; a chunk never fails the answer (errors come as SSE error events,
// which the SDK reports).
func (a *assembler) add(chunk *oai.ChatCompletionChunk) ([]llm.Part, error) {
	if chunk.JSON.Usage.Valid() {
		a.usage = &llm.Usage{InputTokens: int(chunk.Usage.PromptTokens), OutputTokens: int(chunk.Usage.CompletionTokens)}
	}
	var out []llm.Part
	for i := range chunk.Choices {
		ch := &chunk.Choices[i]
		if ch.Index != 0 { // we ask for one choice
			continue
		}
		d := &ch.Delta
		a.reasoning.WriteString(reasoningDelta(d))
		if text := d.Content + d.Refusal; text != "" {
			out = a.flushReasoning(out)
			out = append(out, llm.Part{Kind: llm.PartText, Text: text})
		}
		for j := range d.ToolCalls {
			out = a.flushReasoning(out)
			out = append(out, a.addCall(&d.ToolCalls[j])...)
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return out, nil
}

// reasoningDelta reads a reasoning delta from the fields the SDK does not
// know; "" when there is none.
func reasoningDelta(d *oai.ChatCompletionChunkChoiceDelta) string {
	for _, name := range reasoningFields {
		f, ok := d.JSON.ExtraFields[name]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// addCall adds a tool call delta to the call its index is building and
// returns its arguments as a fragment. A delta with a new id at a used
// index starts a new call: some servers send every call at index 0.
func (a *assembler) addCall(tc *oai.ChatCompletionChunkChoiceDeltaToolCall) []llm.Part {
	if a.byIndex == nil {
		a.byIndex = make(map[int64]*callDraft)
	}
	c := a.byIndex[tc.Index]
	if c == nil || (tc.ID != "" && c.id != "" && tc.ID != c.id) {
		c = newCall(&a.calls)
		a.byIndex[tc.Index] = c
	}
	if c.id == "" && !c.streamed {
		c.id = tc.ID
	}
	if c.name == "" {
		c.name = tc.Function.Name
	}
	return c.fragment(tc.Function.Arguments)
}

// flushReasoning appends the gathered reasoning, if any, as one part.
func (a *assembler) flushReasoning(out []llm.Part) []llm.Part {
	if a.reasoning.Len() == 0 {
		return out
	}
	out = append(out, llm.Part{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{Text: a.reasoning.String()}})
	a.reasoning.Reset()
	return out
}

// finished reports whether the provider said why the answer ended: only
// then is the answer whole.
func (a *assembler) finished() bool { return a.finish != "" }

// end returns the parts that close the answer: reasoning not yet sent, the
// tool calls, usage, the finish reason.
func (a *assembler) end() []llm.Part {
	out := a.flushReasoning(nil)
	for _, c := range a.calls {
		out = append(out, c.part())
	}
	if a.usage != nil {
		out = append(out, llm.Part{Kind: llm.PartUsage, Usage: a.usage})
	}
	return append(out, llm.Part{Kind: llm.PartFinish, Finish: finishReason(a.finish, len(a.calls) > 0)})
}

// finishReason maps the provider's finish reason. An answer with tool calls
// ends for them whatever the server says (some say "stop"); reasons of newer
// versions count as a normal stop.
func finishReason(reason string, calls bool) llm.FinishReason {
	switch {
	case reason == "length":
		return llm.FinishLength
	case reason == "content_filter":
		return llm.FinishFiltered
	case calls || reason == "tool_calls" || reason == "function_call":
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}
