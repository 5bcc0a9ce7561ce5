package validators

import "github.com/engine-brain/brain/conversation"

// Answer is what a validator judges: one model answer and the turn so far.
type Answer struct {
	// Turn holds the events of the current turn before this answer.
	Turn []conversation.Event
	// Text is the answer's free text; ToolCalls counts its tool calls.
	Text      string
	ToolCalls int
	// Reply is the message of a lone respond call; IsReply says there is one.
	Reply   string
	IsReply bool
}

// Correction asks the model to answer again. It is control flow, not an
// error: the engine appends Text and calls the model once more.
type Correction struct {
	Validator string
	Text      string
}

// Validator checks one answer.
type Validator interface {
	Name() string
	// Check returns a correction and true when the answer breaks its rule.
	Check(a *Answer) (Correction, bool)
}

// Func adapts a function to a Validator, like net/http's HandlerFunc.
type Func struct {
	ID string
	Fn func(a *Answer) (Correction, bool)
}

// Name returns f.ID.
func (f Func) Name() string { return f.ID }

// Check calls f.Fn.
func (f Func) Check(a *Answer) (Correction, bool) { return f.Fn(a) }
