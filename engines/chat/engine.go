package chat

import (
	"context"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/validators"
)

// Engine runs chat turns. Its zero value is ready to use with the wall
// clock; it holds no per-turn state and is safe for concurrent use.
type Engine struct {
	// Clock stamps events; time.Now when nil.
	Clock func() time.Time
}

var _ engines.Engine = (*Engine)(nil)

// Kind is the chat engine kind, recipes' default, stamped by clock.
func Kind(clock func() time.Time) engines.Kind {
	return engines.Kind{Name: recipes.EngineChat, Engine: &Engine{Clock: clock}, Terms: contract{}.Terms}
}

// Run plays one chat turn, or resumes one (engines.Engine).
func (e *Engine) Run(ctx context.Context, t *engines.Turn, cp engines.Checkpointer) (engines.Outcome, error) {
	return rounds.Run(ctx, t, cp, contract{}, e.Clock)
}

// contract is the chat turn protocol: a lone respond call ends the turn,
// and says whether the user is waited for; free text is the legacy answer.
type contract struct{}

func (contract) Ending(r *recipes.Recipe, reg *tools.Registry) (string, []validators.Validator) {
	if r.TurnEndMode() != recipes.TurnEndRespond || !reg.Has(tools.Respond) {
		return "", nil
	}
	return tools.Respond, []validators.Validator{
		validators.NoToolCall{Correction: r.Validation.NoToolCall.Correction},
		validators.DataRelay{
			MinToolResultChars: r.Validation.DataRelay.MinToolResult(),
			MaxReplyChars:      r.Validation.DataRelay.MaxReply(),
			Correction:         r.Validation.DataRelay.Correction,
		},
	}
}

func (contract) NotAlone() string { return tools.RespondNotAloneError }

func (contract) AnswerArgument() string { return "message" }

func (contract) End(e *rounds.Ending, c conversation.ToolCall, text string) (lifecycle.Event, bool) {
	args, err := tools.ParseRespond(c.Arguments)
	if err != nil {
		e.Refuse(c, err.Error())
		return "", false
	}
	if e.Check(&validators.Answer{Text: text, ToolCalls: 1, Reply: args.Message, IsReply: true}, c) {
		return "", false
	}
	e.Deliver(c, tools.RespondResult(args))
	if args.AwaitingUserInput {
		return lifecycle.AwaitUser, true
	}
	return lifecycle.Continue, true
}

// Answer: in the natural mode the model's text is already the answer;
// otherwise it is delivered to the user. Either way the user is waited for.
func (contract) Answer(e *rounds.Ending, text string, natural bool) (lifecycle.Event, bool) {
	if !natural {
		e.Say(text)
	}
	return lifecycle.AwaitUser, true
}

// Idle: a chat turn that ends without respond waits for the user.
func (contract) Idle() lifecycle.Event { return lifecycle.AwaitUser }

// Reports: a chat process has a user, not a parent, to tell.
func (contract) Reports() bool { return false }

// Convention is the chat engine's contract text: how a turn ends with
// respond. The engine adds it after the system prompt of recipes whose
// turns end with respond (engines.System).
const Convention = `You always end your turn with exactly one call to the ` + "`respond`" + ` tool.
The ` + "`message`" + ` field carries the user-facing reply; set
` + "`awaiting_user_input`" + ` to true when you expect the user to react,
false when you've kicked off background work and don't need a reply
right now (the user will see your message and can answer if they want
to interject; the engine will just keep going on the next auto-wakeup).
Never put the user-facing answer in plain assistant text — always go
through ` + "`respond`" + `.

` + "`respond`" + ` MUST be the LAST and ONLY tool call in its response. Never
emit ` + "`respond`" + ` together with other tool calls in the same response.
The correct loop is:

  1. Call work tools. End the response with ONLY those calls — no
     ` + "`respond`" + `.
  2. The runtime executes them and feeds the results back.
  3. In your next response, call ` + "`respond`" + ` alone with the synthesised
     answer.
`

func (contract) Terms(r *recipes.Recipe) engines.Terms { return Terms(r) }

// Terms are a chat turn's terms: in the respond mode, the respond
// convention; in the natural mode none (the model's text is the answer).
// A zaphod head's are the same.
func Terms(r *recipes.Recipe) engines.Terms {
	if r.TurnEndMode() != recipes.TurnEndRespond {
		return engines.Terms{}
	}
	return engines.Terms{Text: Convention, Ending: tools.Respond}
}
