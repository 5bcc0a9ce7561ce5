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
}

// Empty reports whether the answer has neither text nor a tool call.
func (r *Response) Empty() bool {
	return strings.TrimSpace(r.Text) == "" && len(r.ToolCalls) == 0
}

// Collect drains a stream into a Response, joining text deltas. On error it
// returns what arrived so far with the error.
func Collect(stream iter.Seq2[Part, error]) (Response, error) {
	var r Response
	var text strings.Builder
	for p, err := range stream {
		if err != nil {
			r.Text = text.String()
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
				r.Usage.InputTokens += p.Usage.InputTokens
				r.Usage.OutputTokens += p.Usage.OutputTokens
			}
		case PartFinish:
			r.Finish = p.Finish
		}
	}
	r.Text = text.String()
	return r, nil
}
