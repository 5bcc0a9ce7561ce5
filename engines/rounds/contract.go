package rounds

import (
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/validators"
)

// Contract is how an engine's turns end: the loop asks it at every point
// where one kind of process differs from another, and it decides there.
type Contract interface {
	// Ending returns the tool that ends the turns of recipe r, whose pool
	// is reg, and the validators that check the answers (the loop runs
	// them when the recipe's validation is on); "" is the natural mode:
	// the model's free text ends the turn.
	Ending(r *recipes.Recipe, reg *tools.Registry) (tool string, checks []validators.Validator)
	// NotAlone is the error result of the ending tool when it is called
	// beside other tools.
	NotAlone() string
	// AnswerArgument names the ending tool's argument that holds the
	// turn's answer (respond's message), which a live turn shows as the
	// model writes it (live.Answer).
	AnswerArgument() string
	// End handles a lone call c of the ending tool, whose arguments the
	// registry has checked; text is the free text beside it. done says the
	// turn ends with next; else the loop asks the model again.
	End(e *Ending, c conversation.ToolCall, text string) (next lifecycle.Event, done bool)
	// Answer handles free text that ends the turn: in the natural mode
	// (natural), or once the corrections are spent.
	Answer(e *Ending, text string, natural bool) (next lifecycle.Event, done bool)
	// Idle is the lifecycle event of a turn that ends without a decision
	// (limits, model errors).
	Idle() lifecycle.Event
	// Reports says that the turn's failures (a spent budget, a refused
	// key) are reported to a parent, as Outcome.Finish.
	Reports() bool
	// Terms returns the contract text the loop adds to recipe r's system
	// prompt, telling the model how a turn ends, and the ending tool it
	// names (engines.System); the kind gives the same to its
	// engines.Kind.Terms.
	Terms(r *recipes.Recipe) engines.Terms
}

// Endings is a Contract with further tools that end a turn when called
// alone, beside the one Ending names (a chat-like vogon phase's respond,
// beside phase_done): the loop hands a lone call of one to End, and
// answers one called beside other tools with its error result.
type Endings interface {
	// Also returns those tools of recipe r's pool reg, each with the error
	// result of a call beside other tools.
	Also(r *recipes.Recipe, reg *tools.Registry) map[string]string
}

// Decider is a Contract whose ending tool's call may itself wait for a
// person's approval (Ending.Await): the turn that a decision on it wakes
// hands the decision to Decided instead of running a tool, once the
// approval_decided event is durable.
type Decider interface {
	// Decided acts on decision d, made by by, on the ending call c; as End,
	// done says the turn ends with next, else the model is asked again.
	Decided(e *Ending, c conversation.ToolCall, d conversation.ApprovalDecision, by string) (next lifecycle.Event, done bool)
}

// Ending is what a Contract may do to the turn that is ending.
type Ending struct{ r *run }

// Refuse answers call c with the error result text; the model sees it and
// answers again.
func (e *Ending) Refuse(c conversation.ToolCall, text string) {
	e.r.result(c, tools.ErrorResult("%s", text))
}

// Deliver records res as the result of call c, the turn's answer, with the
// sources the turn met (the citations of the model's text and of the
// workers' results it drained).
func (e *Ending) Deliver(c conversation.ToolCall, res tools.Result) {
	e.r.add("tool:"+c.Name, e.r.delivered(c, res))
}

// Say records text as the turn's answer to the user, in free text.
func (e *Ending) Say(text string) {
	answer := conversation.NewChatMessage(text, e.r.citations()...)
	answer.ChatResponse.Audience = []conversation.Role{conversation.RoleUser}
	e.r.add(byEngine, answer)
}

// Await ends the turn with the ending call c waiting for the approval of
// by (conversation.ApproverOperator or ApproverUser), as a gated tool's
// call waits (Outcome.Approvals); End then returns AwaitUser. The decision
// reaches the Contract's Decided, which it must implement.
func (e *Ending) Await(c conversation.ToolCall, by string) {
	e.r.await([]conversation.PendingCall{e.r.pending(c, e.r.requests()-1, tools.Approval{By: by})})
}

// Finish records args as the task's result (Outcome.Finish).
func (e *Ending) Finish(args tools.FinishArgs) { e.r.finish = &args }

// Check runs the validators on a while the correction budget lasts; a
// correction it returns is counted, and recorded as the error result of
// call c (when c.ID is set) for the model to act on.
func (e *Ending) Check(a *validators.Answer, c conversation.ToolCall) bool {
	corr, ok := e.r.check(a)
	if ok {
		e.r.corrected(c, corr)
	}
	return ok
}
