package zaphod

import (
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/validators"
)

// headContract ends a head's turn: its respond message, or its free text,
// is its answer, which the contract keeps for the zaphod turn (one per
// head's turn, never shared).
type headContract struct {
	answer string
	ok     bool
}

var _ rounds.Contract = (*headContract)(nil)

func (*headContract) Ending(r *recipes.Recipe, reg *tools.Registry) (string, []validators.Validator) {
	if r.TurnEndMode() != recipes.TurnEndRespond || !reg.Has(tools.Respond) {
		return "", nil
	}
	return tools.Respond, nil
}

func (*headContract) NotAlone() string { return tools.RespondNotAloneError }

// Terms: a head that ends with respond is told the respond convention, as
// a chat turn is.
func (*headContract) Terms(r *recipes.Recipe) engines.Terms { return chat.Terms(r) }

func (*headContract) AnswerArgument() string { return "message" }

func (c *headContract) End(e *rounds.Ending, call conversation.ToolCall, _ string) (lifecycle.Event, bool) {
	args, err := tools.ParseRespond(call.Arguments)
	if err != nil {
		e.Refuse(call, err.Error())
		return "", false
	}
	c.answer, c.ok = args.Message, true
	return lifecycle.Continue, true
}

func (c *headContract) Answer(_ *rounds.Ending, text string, _ bool) (lifecycle.Event, bool) {
	if text != "" {
		c.answer, c.ok = text, true
	}
	return lifecycle.Continue, true
}

func (*headContract) Idle() lifecycle.Event { return lifecycle.Continue }

func (*headContract) Reports() bool { return false }
