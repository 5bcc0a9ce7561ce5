package rounds

import (
	"iter"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/tools"
)

// publish sends u, of this turn's current round, to the turn's live sink.
func (r *run) publish(u live.Update) {
	if r.t.Progress == nil {
		return
	}
	u.Turn, u.Round, u.At = r.t.ID, r.rounds, r.now()
	r.t.Progress.Publish(u)
}

// streamed passes a model call's stream on, publishing its progress: the
// model's text as it comes (the answer itself in the natural mode, else
// the model thinking aloud) and the answer the ending tool's arguments
// carry as they stream. Offsets count from the call's start; an answer
// whose call is asked again (a retry under another id) starts again at 0.
func (r *run) streamed(stream iter.Seq2[llm.Part, error]) iter.Seq2[llm.Part, error] {
	if r.t.Progress == nil {
		return stream
	}
	r.publish(live.Update{Kind: live.RoundStarted, User: true})
	return func(yield func(llm.Part, error) bool) {
		text := 0
		type answer struct {
			reader  *live.FieldReader
			written int
		}
		answers := map[string]*answer{} // by call id
		field := r.c.AnswerArgument()
		for p, err := range stream {
			switch {
			case err != nil:
			case p.Kind == llm.PartText && p.Text != "":
				r.publish(live.Update{Kind: live.Text, Delta: p.Text, Offset: text, User: r.terminal == ""})
				text += len(p.Text)
			case p.Kind == llm.PartToolArgs && p.ToolCall != nil && p.ToolCall.Name == r.terminal && r.terminal != "" && field != "":
				a := answers[p.ToolCall.ID]
				if a == nil {
					a = &answer{reader: live.NewFieldReader(field)}
					answers[p.ToolCall.ID] = a
				}
				if d := a.reader.Feed(string(p.ToolCall.Arguments)); d != "" {
					r.publish(live.Update{Kind: live.Answer, Delta: d, Offset: a.written, CallID: p.ToolCall.ID, User: true})
					a.written += len(d)
				}
			}
			if !yield(p, err) {
				return
			}
		}
	}
}

// running publishes that tool call c starts, and returns what publishes
// its end with its result.
func (r *run) running(c conversation.ToolCall) func(tools.Result) {
	if r.t.Progress == nil {
		return func(tools.Result) {}
	}
	r.publish(live.Update{Kind: live.ToolStarted, Tool: c.Name, CallID: c.ID})
	return func(res tools.Result) {
		r.publish(live.Update{Kind: live.ToolFinished, Tool: c.Name, CallID: c.ID, IsError: res.IsError})
	}
}
