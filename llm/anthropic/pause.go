package anthropic

import (
	"encoding/json"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

// maxContinuations bounds the requests that continue one paused answer.
// The API pauses a long turn of server tool use (pause_turn) so that a
// client can stop it; a model that searches without end must not make
// one call cost without end.
const maxContinuations = 5

// pause is what an answer holds when the API paused it: the continuations
// asked so far, the length of its text, and the content blocks of every
// response so far, as received. A continuation sends the same request
// with those blocks as the last assistant message, and the API goes on
// with the same turn: its response holds only the blocks that come next.
type pause struct {
	n       int
	text    int
	content []sdk.ContentBlockParamUnion
}

// assembler is a reader of the next response, starting where the answer is.
func (p *pause) assembler() *assembler {
	return &assembler{text: p.text, resumable: p.n < maxContinuations}
}

// add takes the response a paused.
func (p *pause) add(a *assembler) {
	p.n++
	p.text = a.text
	for _, b := range a.order {
		if raw, ok := b.native(); ok {
			p.content = append(p.content, param.Override[sdk.ContentBlockParamUnion](raw))
		}
	}
}

// params is the request that continues the answer: base, its last message
// the blocks received so far (joined to base's own last assistant message,
// if it ends with one: the API reads consecutive turns of a role as one).
// base is left as it is.
func (p *pause) params(base sdk.MessageNewParams) sdk.MessageNewParams {
	if p.n == 0 {
		return base
	}
	msgs := slices.Clone(base.Messages)
	if n := len(msgs); n > 0 && msgs[n-1].OfAssistant != nil {
		last := *msgs[n-1].OfAssistant
		last.Content = append(slices.Clone(last.Content), p.content...)
		msgs[n-1] = sdk.MessageParam{OfAssistant: &last}
	} else {
		msgs = append(msgs, sdk.NewAssistantMessage(slices.Clone(p.content)...))
	}
	base.Messages = msgs
	return base
}

// native is b as the API sent it, its deltas applied: the block
// content_block_start sent, with the text, citations, thinking, signature
// or input that came after. ok is false for a block of a kind this adapter
// does not read (it cannot rebuild it whole) and for input that is not
// JSON.
func (b *block) native() (raw json.RawMessage, ok bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(b.start), &fields) != nil || fields == nil {
		return nil, false
	}
	set := func(key string, v any) {
		fields[key], _ = json.Marshal(v)
	}
	switch b.kind {
	case blockText:
		set("text", b.text.String())
		if len(b.cited) > 0 {
			set("citations", b.cited)
		}
	case blockThinking:
		set("thinking", b.thinking.String())
		set("signature", b.signature)
	case blockToolUse, blockSearch:
		input := json.RawMessage(inputJSON(b))
		if !json.Valid(input) {
			return nil, false
		}
		fields["input"] = input
	case blockRedacted, blockSearchResult:
		// Whole in content_block_start.
	default:
		return nil, false
	}
	raw, err := json.Marshal(fields)
	return raw, err == nil
}
