package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// blockKind is what a content block of the stream is, as far as we care.
type blockKind int

const (
	blockSkipped  blockKind = iota // a kind we do not know or do not use
	blockText                      // text, streamed as it arrives
	blockThinking                  // thinking, sent whole with its signature
	blockToolUse                   // a tool call, sent whole at the end
)

// block is a content block being assembled.
type block struct {
	kind      blockKind
	id, name  string
	input     strings.Builder // tool_use: the input_json_delta fragments
	startJSON string          // tool_use: the input of content_block_start
	thinking  strings.Builder
	signature string
}

// assembler turns the events of one streamed message into parts. Text goes
// out as it arrives; a thinking block goes out as one reasoning part, with
// its signature, when it stops; tool calls are assembled from their
// input_json_delta fragments and sent whole, with usage and the finish
// reason, by end (so that an answer of tool calls alone can be retried when
// its stream is cut).
//
// Blocks are tracked by their index. Block, delta and event kinds it does not
// know (server_tool_use, web_search_tool_result, citations, newer kinds) are
// skipped, never fatal.
type assembler struct {
	blocks map[int64]*block
	calls  []*block // tool_use blocks, in order of start
	usage  llm.Usage
	sized  bool   // a usage was sent
	stop   string // the provider's stop reason; "" until message_delta
}

// add takes one event and returns the parts it completes, in order.
func (a *assembler) add(ev *sdk.MessageStreamEventUnion) []llm.Part {
	switch ev.Type {
	case "message_start":
		if u := ev.Message.Usage; ev.Message.JSON.Usage.Valid() {
			a.usage = llm.Usage{
				InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
				OutputTokens: int(u.OutputTokens),
			}
			a.sized = true
		}
	case "content_block_start":
		return a.start(ev.Index, &ev.ContentBlock)
	case "content_block_delta":
		return a.delta(ev.Index, &ev.Delta)
	case "content_block_stop":
		b := a.blocks[ev.Index]
		if b != nil && b.kind == blockThinking {
			delete(a.blocks, ev.Index)
			return []llm.Part{{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{
				Text: b.thinking.String(), Signature: b.signature,
			}}}
		}
	case "message_delta":
		// Usage counts here are cumulative: they replace those of
		// message_start. Input counts the prompt whole: tokens written to
		// and read from the cache are billed as input too.
		if u := ev.Usage; ev.JSON.Usage.Valid() {
			if n := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; n > 0 {
				a.usage.InputTokens = int(n)
			}
			a.usage.OutputTokens = int(u.OutputTokens)
			a.sized = true
		}
		if s := string(ev.Delta.StopReason); s != "" {
			a.stop = s
		}
	}
	// message_stop says nothing message_delta did not; ping and newer event
	// kinds carry nothing we use.
	return nil
}

// start opens the block at index.
func (a *assembler) start(index int64, cb *sdk.ContentBlockStartEventContentBlockUnion) []llm.Part {
	if a.blocks == nil {
		a.blocks = make(map[int64]*block)
	}
	b := &block{}
	a.blocks[index] = b
	switch cb.Type {
	case "text":
		b.kind = blockText
		if cb.Text != "" {
			return []llm.Part{{Kind: llm.PartText, Text: cb.Text}}
		}
	case "thinking":
		b.kind = blockThinking
		b.thinking.WriteString(cb.Thinking)
		b.signature = cb.Signature
	case "tool_use":
		b.kind, b.id, b.name = blockToolUse, cb.ID, cb.Name
		b.startJSON = cb.JSON.Input.Raw()
		a.calls = append(a.calls, b)
	}
	// redacted_thinking, server_tool_use, web_search_tool_result and newer
	// kinds stay blockSkipped: their deltas are dropped.
	return nil
}

// delta adds a delta to the block at index. A text delta for a block that
// was never started is kept: losing answer text is worse than a stream
// out of order.
func (a *assembler) delta(index int64, d *sdk.MessageStreamEventUnionDelta) []llm.Part {
	b := a.blocks[index]
	if b == nil {
		if d.Type == "text_delta" && d.Text != "" {
			return []llm.Part{{Kind: llm.PartText, Text: d.Text}}
		}
		return nil
	}
	switch {
	case d.Type == "text_delta" && b.kind == blockText && d.Text != "":
		return []llm.Part{{Kind: llm.PartText, Text: d.Text}}
	case d.Type == "input_json_delta" && b.kind == blockToolUse:
		b.input.WriteString(d.PartialJSON)
	case d.Type == "thinking_delta" && b.kind == blockThinking:
		b.thinking.WriteString(d.Thinking)
	case d.Type == "signature_delta" && b.kind == blockThinking:
		b.signature += d.Signature
	}
	// citations_delta and newer delta kinds are skipped.
	return nil
}

// finished reports whether the provider said why the message ended: only
// then is the answer whole.
func (a *assembler) finished() bool { return a.stop != "" }

// end returns the parts that close the answer: the tool calls, usage, the
// finish reason. Thinking of a block that never stopped is dropped: without
// its signature the provider would refuse it back.
func (a *assembler) end() []llm.Part {
	var out []llm.Part
	for i, c := range a.calls {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("toolu_%d", i) // the engine pairs results by id
		}
		args := c.input.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
			if s := strings.TrimSpace(c.startJSON); s != "" && s != "null" {
				args = s // an input sent whole in content_block_start
			}
		}
		// Arguments go on exactly as sent, valid JSON or not: the engine
		// tells the model when they are not.
		out = append(out, llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{
			ID: id, Name: c.name, Arguments: json.RawMessage(args),
		}})
	}
	if a.sized {
		u := a.usage
		out = append(out, llm.Part{Kind: llm.PartUsage, Usage: &u})
	}
	return append(out, llm.Part{Kind: llm.PartFinish, Finish: finishReason(a.stop, len(a.calls) > 0)})
}

// finishReason maps the provider's stop reason. An answer with tool calls
// ends for them; reasons of newer versions count as a normal stop.
func finishReason(reason string, calls bool) llm.FinishReason {
	switch {
	case reason == "max_tokens" || reason == "model_context_window_exceeded":
		return llm.FinishLength
	case reason == "refusal":
		return llm.FinishFiltered
	case calls || reason == "tool_use":
		return llm.FinishToolCalls
	}
	return llm.FinishStop // end_turn, stop_sequence, pause_turn, newer reasons
}
