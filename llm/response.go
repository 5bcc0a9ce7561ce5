package llm

import (
	"iter"
	"strings"

	"github.com/engine-brain/brain/conversation"
)

// Response is a whole answer, collected from its stream.
type Response struct {
	Text      string
	Reasoning []conversation.Reasoning
	ToolCalls []conversation.ToolCall
	Usage     Usage
	Finish    FinishReason
	// Hosted are the states of provider-hosted work, in stream order, each
	// with its place in Text (TextAt).
	Hosted []conversation.HostedActivity
	// Citations are the sources the text cites.
	Citations []conversation.Citation
}

// Empty reports whether the answer has neither text nor a tool call.
func (r *Response) Empty() bool {
	return strings.TrimSpace(r.Text) == "" && len(r.ToolCalls) == 0
}

// Started reports whether any part of an answer arrived: text, reasoning,
// a tool call or hosted activity.
func (r *Response) Started() bool {
	return r.Text != "" || len(r.Reasoning) > 0 || len(r.ToolCalls) > 0 || len(r.Hosted) > 0 || len(r.Citations) > 0
}

// Collect drains a stream into a Response, joining text deltas. On error it
// returns what arrived so far with the error; its citations are then marked
// incomplete (the answer they annotate was cut).
func Collect(stream iter.Seq2[Part, error]) (Response, error) {
	var r Response
	var text strings.Builder
	for p, err := range stream {
		if err != nil {
			r.Text = text.String()
			for i := range r.Citations {
				r.Citations[i].Incomplete = true
			}
			return r, err
		}
		switch p.Kind {
		case PartText:
			text.WriteString(p.Text)
		case PartReasoning:
			if p.Reasoning != nil {
				r.Reasoning = append(r.Reasoning, *p.Reasoning)
			}
		case PartToolCall:
			if p.ToolCall != nil {
				r.ToolCalls = append(r.ToolCalls, *p.ToolCall)
			}
		case PartUsage:
			if p.Usage != nil {
				r.Usage.Add(*p.Usage)
			}
		case PartHosted:
			if p.Hosted != nil {
				h := *p.Hosted
				h.TextAt = text.Len()
				r.Hosted = append(r.Hosted, h)
			}
		case PartCitation:
			if p.Citation != nil {
				r.Citations = append(r.Citations, *p.Citation)
			}
		case PartFinish:
			r.Finish = p.Finish
		}
	}
	r.Text = text.String()
	return r, nil
}
