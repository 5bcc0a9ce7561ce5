package anthropic

import (
	"cmp"
	"encoding/json"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm/provider"
)

// assistantBlocks maps the assistant message at index i of the view to the
// content blocks Anthropic sent, in their order: reasoning first (the API
// wants it before the answer it led to; see reasoningBlock), then the text
// cut into the text blocks it came in, each web search's server_tool_use
// and web_search_tool_result blocks in its place, each cited text block
// with its citations, then the tool calls. Only this adapter's payloads
// are sent (see own): with none, the text goes as one block. A payload of
// its own it cannot send back refuses the request (see check).
func assistantBlocks(i int, m conversation.Message) ([]sdk.ContentBlockParamUnion, error) {
	var out []sdk.ContentBlockParamUnion
	for j, r := range m.Reasoning {
		b, ok, err := reasoningBlock(r)
		if err != nil {
			return nil, provider.Unsendable(name, "messages[%d].reasoning[%d]: %v", i, j, err)
		}
		if ok {
			out = append(out, b)
		}
	}
	text := m.Text()
	searches, err := searchBlocks(i, m.Hosted, len(text))
	if err != nil {
		return nil, err
	}
	spans, err := citedSpans(i, m.Citations, len(text))
	if err != nil {
		return nil, err
	}
	out = append(out, answer(text, searches, spans)...)
	for _, tc := range m.ToolCalls {
		out = append(out, sdk.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
	}
	return out, nil
}

// placed is a block sent as it came and where it goes in the text.
type placed struct {
	at    int
	block sdk.ContentBlockParamUnion
}

// searchBlocks returns the blocks of the web searches of hosted, in order,
// each at its TextAt (within n, the text's length). A search goes back
// whole or not at all, since the API refuses a server_tool_use without its
// result and a result without its server_tool_use: one without both
// payloads (cut before it ended, or logged before started states had one)
// is left out, and the text alone tells of it.
func searchBlocks(i int, hosted []conversation.HostedActivity, n int) ([]placed, error) {
	uses, results := map[string]bool{}, map[string]bool{}
	for j, h := range hosted {
		if !own(h.Payload) {
			continue
		}
		if err := check(h.Payload); err != nil {
			return nil, provider.Unsendable(name, "messages[%d].hosted[%d]: %v", i, j, err)
		}
		switch h.Payload.Format {
		case formatSearchUse:
			uses[h.ActivityID] = true
		case formatSearchResult:
			results[h.ActivityID] = true
		}
	}
	var out []placed
	for _, h := range hosted {
		if uses[h.ActivityID] && results[h.ActivityID] && own(h.Payload) &&
			(h.Payload.Format == formatSearchUse || h.Payload.Format == formatSearchResult) {
			out = append(out, placed{at: min(max(h.TextAt, 0), n), block: param.Override[sdk.ContentBlockParamUnion](h.Payload.Value)})
		}
	}
	slices.SortStableFunc(out, func(a, b placed) int { return cmp.Compare(a.at, b.at) })
	return out, nil
}

// span is a cited span of the text and its citation as it came.
type span struct {
	start, end int
	citation   json.RawMessage
}

// citedSpans returns the spans the citations of this adapter cite in a text
// of n bytes. A citation without a span in the text has no text block to
// go with, and is left out.
func citedSpans(i int, cites []conversation.Citation, n int) ([]span, error) {
	var out []span
	for j, c := range cites {
		if !own(c.Replay) {
			continue
		}
		if err := check(c.Replay); err != nil {
			return nil, provider.Unsendable(name, "messages[%d].citations[%d]: %v", i, j, err)
		}
		if r := c.Range; c.Replay.Format == formatCitation && r != nil && 0 <= r.Start && r.Start < r.End && r.End <= n {
			out = append(out, span{start: r.Start, end: r.End, citation: c.Replay.Value})
		}
	}
	return out, nil
}

// answer cuts text into text blocks at each place a search goes and each
// end of a cited span, and puts the searches in their places. Anthropic
// cites whole text blocks, so the cuts give back the blocks it sent; a
// text block carries the citations whose span holds it.
func answer(text string, searches []placed, spans []span) []sdk.ContentBlockParamUnion {
	cuts := []int{0, len(text)}
	for _, s := range searches {
		cuts = append(cuts, s.at)
	}
	for _, s := range spans {
		cuts = append(cuts, s.start, s.end)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []sdk.ContentBlockParamUnion
	next := 0 // the first search not placed yet
	for c, from := range cuts {
		for ; next < len(searches) && searches[next].at <= from; next++ {
			out = append(out, searches[next].block)
		}
		if c+1 == len(cuts) {
			break
		}
		to := cuts[c+1]
		b := sdk.TextBlockParam{Text: text[from:to]}
		for _, s := range spans {
			if s.start <= from && to <= s.end {
				b.Citations = append(b.Citations, param.Override[sdk.TextCitationParamUnion](s.citation))
			}
		}
		out = append(out, sdk.ContentBlockParamUnion{OfText: &b})
	}
	return out
}
