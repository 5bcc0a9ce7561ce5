package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// groundingParts turns the answer's grounding metadata into the parts of a
// hosted web search: the search as an activity (started and completed at
// once: Gemini reports it only with the answer), one citation per source a
// grounding support cites, with the byte span of the text it supports, and
// a citation without a span for each source none cites. searches is the
// number of queries the provider ran.
func (a *assembler) groundingParts() (out []llm.Part, searches int) {
	g := a.grounding
	queries := g.WebSearchQueries
	if queries == nil {
		queries = []string{}
	}
	if len(queries) > 0 || len(g.GroundingChunks) > 0 {
		input, _ := json.Marshal(queries)
		id := "search_" + a.uniqueID()
		sources := 0
		for _, c := range g.GroundingChunks {
			if c != nil && c.Web != nil && c.Web.URI != "" {
				sources++
			}
		}
		out = append(out,
			hosted(conversation.HostedActivity{ActivityID: id, Name: hostedWebSearch, State: conversation.ActivityStarted, Input: input}),
			hosted(conversation.HostedActivity{ActivityID: id, Name: hostedWebSearch, State: conversation.ActivityCompleted, Input: input,
				Summary: fmt.Sprintf("%d queries, %d sources", len(queries), sources)}),
		)
	}
	text := a.text.String()
	cited := make([]bool, len(g.GroundingChunks))
	for _, s := range g.GroundingSupports {
		if s == nil {
			continue
		}
		r := segmentRange(text, s.Segment)
		for _, i := range s.GroundingChunkIndices {
			src, ok := source(g.GroundingChunks, int(i))
			if !ok {
				continue
			}
			cited[i] = true
			c := &conversation.Citation{Source: src}
			if r != nil {
				span := *r
				c.Range = &span
			}
			out = append(out, llm.Part{Kind: llm.PartCitation, Citation: c})
		}
	}
	for i := range g.GroundingChunks {
		if src, ok := source(g.GroundingChunks, i); ok && !cited[i] {
			out = append(out, llm.Part{Kind: llm.PartCitation, Citation: &conversation.Citation{Source: src}})
		}
	}
	return out, len(g.WebSearchQueries)
}

func hosted(h conversation.HostedActivity) llm.Part {
	return llm.Part{Kind: llm.PartHosted, Hosted: &h}
}

// source is the web page of chunks[i]; false when there is none (an index
// out of range, a chunk of another kind).
func source(chunks []*genai.GroundingChunk, i int) (conversation.Source, bool) {
	if i < 0 || i >= len(chunks) || chunks[i] == nil || chunks[i].Web == nil || chunks[i].Web.URI == "" {
		return conversation.Source{}, false
	}
	return conversation.Source{URL: chunks[i].Web.URI, Title: chunks[i].Web.Title}, true
}

// segmentRange is the byte span of text a grounding segment covers. Gemini
// gives UTF-8 byte offsets (start inclusive, end exclusive) into the text;
// when they do not fit the collected text or disagree with the segment's
// own text (offsets into one part of several), the segment's text is looked
// up instead. nil when neither places it.
func segmentRange(text string, seg *genai.Segment) *conversation.Range {
	if seg == nil {
		return nil
	}
	start, end := int(seg.StartIndex), int(seg.EndIndex)
	if 0 <= start && start < end && end <= len(text) && (seg.Text == "" || text[start:end] == seg.Text) {
		return &conversation.Range{Start: start, End: end}
	}
	if seg.Text != "" {
		if i := strings.Index(text, seg.Text); i >= 0 {
			return &conversation.Range{Start: i, End: i + len(seg.Text)}
		}
	}
	return nil
}
