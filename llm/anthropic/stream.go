package anthropic

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// blockKind is what a content block of the stream is, as far as we care.
type blockKind int

const (
	blockSkipped      blockKind = iota // a kind we do not know or do not use
	blockText                          // text, streamed as it arrives; citations when it stops
	blockThinking                      // thinking, sent whole with its signature
	blockRedacted                      // redacted thinking, sent whole with its data
	blockToolUse                       // a tool call: its input as it streams, whole at the end
	blockSearch                        // server_tool_use of web_search: a search started
	blockSearchResult                  // web_search_tool_result: the search ended
)

// block is a content block being assembled.
type block struct {
	kind      blockKind
	start     string // the block as content_block_start sent it
	id, name  string
	input     strings.Builder // tool_use, server_tool_use: the input_json_delta fragments
	startJSON string          // tool_use, server_tool_use: the input of content_block_start
	thinking  strings.Builder
	signature string
	data      string // redacted_thinking: the encrypted data
	// text: where the block's text starts in the answer's text (in bytes),
	// its text, and its citations: every one as sent (cited), and those
	// sent as parts when the block stops and its end is known.
	offset    int
	text      strings.Builder
	cited     []json.RawMessage
	citations []conversation.Citation
}

// assembler turns the events of one streamed message into parts. Text goes
// out as it arrives; a thinking or redacted thinking block goes out as one
// reasoning part when it stops; a text block's citations go out when it
// stops; a web search goes out as hosted activity when its server_tool_use
// block stops (started, with the query) and when its result block stops
// (completed or failed); tool calls are assembled from their
// input_json_delta fragments, each going out as it arrives (progress, see
// llm.Part.Progress), and sent whole, with usage and the finish reason, by
// end (so that an answer of tool calls alone can be retried when its stream
// is cut).
//
// Blocks are tracked by their index. Block, delta, citation and event kinds
// it does not know (server tools other than web search, their results,
// newer kinds) are skipped, never fatal.
//
// An assembler reads one response. When the API pauses the answer
// (pause_turn), the next response continues it with a new assembler that
// starts where this one ended (text), and the blocks of every response so
// far go back to the API (see pause).
type assembler struct {
	blocks map[int64]*block
	order  []*block // every block, in order of start
	calls  []*block // tool_use blocks, in order of start
	usage  llm.Usage
	sized  bool   // a usage was sent
	stop   string // the provider's stop reason; "" until message_delta
	text   int    // bytes of the answer's text sent so far: the offset of the next text
	// resumable says a pause_turn stop may be continued: the bound on
	// continuations is not reached.
	resumable bool
}

// add takes one event and returns the parts it completes, in order.
func (a *assembler) add(ev *sdk.MessageStreamEventUnion) []llm.Part {
	switch ev.Type {
	case "message_start":
		if u := ev.Message.Usage; ev.Message.JSON.Usage.Valid() {
			a.usage = llm.Usage{
				InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
				OutputTokens: int(u.OutputTokens),
				Hosted:       hostedUsage(u.ServerToolUse),
			}
			a.sized = true
		}
	case "content_block_start":
		return a.start(ev.Index, &ev.ContentBlock)
	case "content_block_delta":
		return a.delta(ev.Index, &ev.Delta)
	case "content_block_stop":
		b := a.blocks[ev.Index]
		if b == nil || b.kind == blockToolUse {
			return nil // a tool call goes out whole, by end
		}
		delete(a.blocks, ev.Index)
		return a.closeBlock(b)
	case "message_delta":
		// Usage counts here are cumulative: they replace those of
		// message_start. Input counts the prompt whole: tokens written to
		// and read from the cache are billed as input too.
		if u := ev.Usage; ev.JSON.Usage.Valid() {
			if n := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; n > 0 {
				a.usage.InputTokens = int(n)
			}
			a.usage.OutputTokens = int(u.OutputTokens)
			if u.JSON.ServerToolUse.Valid() {
				a.usage.Hosted = hostedUsage(u.ServerToolUse)
			}
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
	b := &block{start: cb.RawJSON()}
	a.blocks[index] = b
	a.order = append(a.order, b)
	switch cb.Type {
	case "text":
		b.kind, b.offset = blockText, a.text
		for _, c := range cb.Citations {
			b.cite(c.RawJSON())
		}
		if cb.Text != "" {
			return []llm.Part{a.textPart(b, cb.Text)}
		}
	case "thinking":
		b.kind = blockThinking
		b.thinking.WriteString(cb.Thinking)
		b.signature = cb.Signature
	case "redacted_thinking":
		b.kind, b.data = blockRedacted, cb.Data
	case "tool_use":
		b.kind, b.id, b.name = blockToolUse, cb.ID, cb.Name
		if b.id == "" {
			b.id = fmt.Sprintf("toolu_%d", len(a.calls)) // the engine pairs results by id
		}
		b.startJSON = cb.JSON.Input.Raw()
		a.calls = append(a.calls, b)
	case "server_tool_use":
		if cb.Name == webSearch {
			b.kind, b.id = blockSearch, activityID(cb.ID, index)
			b.startJSON = cb.JSON.Input.Raw()
		}
	case "web_search_tool_result":
		b.kind, b.id = blockSearchResult, activityID(cb.ToolUseID, index)
	}
	// Other server tools, their results and newer kinds stay blockSkipped:
	// their deltas are dropped.
	return nil
}

// delta adds a delta to the block at index. A text delta for a block that
// was never started is kept: losing answer text is worse than a stream
// out of order.
func (a *assembler) delta(index int64, d *sdk.MessageStreamEventUnionDelta) []llm.Part {
	b := a.blocks[index]
	if b == nil {
		if d.Type == "text_delta" && d.Text != "" {
			return []llm.Part{a.textPart(nil, d.Text)}
		}
		return nil
	}
	switch {
	case d.Type == "text_delta" && b.kind == blockText && d.Text != "":
		return []llm.Part{a.textPart(b, d.Text)}
	case d.Type == "citations_delta" && b.kind == blockText:
		b.cite(d.Citation.RawJSON())
	case d.Type == "input_json_delta" && b.kind == blockToolUse && d.PartialJSON != "":
		b.input.WriteString(d.PartialJSON)
		return []llm.Part{{Kind: llm.PartToolArgs, ToolCall: &conversation.ToolCall{
			ID: b.id, Name: b.name, Arguments: json.RawMessage(d.PartialJSON),
		}}}
	case d.Type == "input_json_delta" && b.kind == blockSearch:
		b.input.WriteString(d.PartialJSON)
	case d.Type == "thinking_delta" && b.kind == blockThinking:
		b.thinking.WriteString(d.Thinking)
	case d.Type == "signature_delta" && b.kind == blockThinking:
		b.signature += d.Signature
	}
	// Newer delta kinds are skipped.
	return nil
}

// closeBlock returns the parts the stopped block b completes.
func (a *assembler) closeBlock(b *block) []llm.Part {
	switch b.kind {
	case blockText:
		return a.citations(b)
	case blockThinking:
		return []llm.Part{{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{
			Text: b.thinking.String(), Signature: b.signature,
		}}}
	case blockRedacted:
		return []llm.Part{{Kind: llm.PartReasoning, Reasoning: redacted(b.data)}}
	case blockSearch:
		native, _ := b.native()
		return []llm.Part{{Kind: llm.PartHosted, Hosted: searchStarted(b.id, inputJSON(b), native)}}
	case blockSearchResult:
		return []llm.Part{{Kind: llm.PartHosted, Hosted: searchEnded(b.id, b.start)}}
	}
	return nil
}

// textPart is a text part of s, counted into the answer's length and kept
// in its block b (nil for text of a block never started).
func (a *assembler) textPart(b *block, s string) llm.Part {
	a.text += len(s)
	if b != nil {
		b.text.WriteString(s)
	}
	return llm.Part{Kind: llm.PartText, Text: s}
}

// cite adds a citation, raw as sent, to the text block b.
func (b *block) cite(raw string) {
	b.cited = append(b.cited, json.RawMessage(raw))
	if c, ok := citation(raw); ok {
		b.citations = append(b.citations, c)
	}
}

// citations returns the citation parts of the text block b, each anchored
// to the block's span of the answer's text as sent so far: Anthropic cites
// a whole text block, not offsets within it.
func (a *assembler) citations(b *block) []llm.Part {
	out := make([]llm.Part, 0, len(b.citations))
	for i := range b.citations {
		c := b.citations[i]
		c.Range = &conversation.Range{Start: b.offset, End: a.text}
		out = append(out, llm.Part{Kind: llm.PartCitation, Citation: &c})
	}
	b.citations = nil
	return out
}

// unstopped returns the citations of text blocks that never stopped, in
// block order, anchored to the text sent so far: when a stream breaks after
// text went out, the consumer keeps that text, and its citations belong
// with it (llm.Collect marks them incomplete).
func (a *assembler) unstopped() []llm.Part {
	var out []llm.Part
	for _, i := range slices.Sorted(maps.Keys(a.blocks)) {
		if b := a.blocks[i]; b.kind == blockText {
			out = append(out, a.citations(b)...)
		}
	}
	return out
}

// activityID is id, or one made up from the block's index when the
// provider sent none (the log needs one).
func activityID(id string, index int64) string {
	if id == "" {
		return fmt.Sprintf("srvtoolu_%d", index)
	}
	return id
}

// inputJSON is the input of a tool_use or server_tool_use block: its
// input_json_delta fragments joined, or the input of content_block_start
// when none came, or "{}".
func inputJSON(b *block) string {
	if args := b.input.String(); strings.TrimSpace(args) != "" {
		return args
	}
	if s := strings.TrimSpace(b.startJSON); s != "" && s != "null" {
		return s // an input sent whole in content_block_start
	}
	return "{}"
}

// finished reports whether the provider said why the message ended: only
// then is the answer whole.
func (a *assembler) finished() bool { return a.stop != "" }

// paused reports whether the API paused the answer and it is to be
// continued: a pause_turn stop within the bound. A paused response with
// tool calls is not continued (their results are the engine's to send)
// and ends the answer for them.
func (a *assembler) paused() bool {
	return a.stop == "pause_turn" && a.resumable && len(a.calls) == 0
}

// end returns the parts that close the response: the tool calls, usage, and
// the finish reason unless the answer goes on (paused). Thinking of a block
// that never stopped is dropped: without its signature the provider would
// refuse it back.
func (a *assembler) end() []llm.Part {
	out := a.unstopped() // none, unless a text block's stop was lost
	for _, c := range a.calls {
		// Arguments go on exactly as sent, valid JSON or not: the engine
		// tells the model when they are not.
		out = append(out, llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{
			ID: c.id, Name: c.name, Arguments: json.RawMessage(inputJSON(c)),
		}})
	}
	if a.sized {
		u := a.usage
		out = append(out, llm.Part{Kind: llm.PartUsage, Usage: &u})
	}
	if a.paused() {
		return out
	}
	return append(out, llm.Part{Kind: llm.PartFinish, Finish: finishReason(a.stop, len(a.calls) > 0)})
}

// finishReason maps the provider's stop reason. An answer with tool calls
// ends for them; reasons of newer versions count as a normal stop.
//
// A pause_turn that ends the answer is one past the bound on continuations
// (see pause): a bound cut the answer short, as max_tokens does.
func finishReason(reason string, calls bool) llm.FinishReason {
	switch {
	case reason == "max_tokens" || reason == "model_context_window_exceeded":
		return llm.FinishLength
	case reason == "refusal":
		return llm.FinishFiltered
	case calls || reason == "tool_use":
		return llm.FinishToolCalls
	case reason == "pause_turn":
		return llm.FinishLength
	}
	return llm.FinishStop // end_turn, stop_sequence, newer reasons
}
