package inbox

import (
	"slices"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
)

// Effect is what the wake rule makes of a message posted to a process (OnPost)
// or of a change of the process's state (AfterChange).
type Effect struct {
	// Err refuses the message: ErrNotFound (no process), ErrClosed (DONE or
	// FAILED), ErrBusy (a user's message to a RUNNING process whose
	// steering is SteeringReject). Nothing else applies. A repeated idempotency key is answered
	// before the rule is asked: it returns the first message's id, even
	// from a process closed or full since.
	Err error
	// Bounded: the message counts against the inbox limit; when the inbox
	// holds the limit already, it is refused with a *FullError.
	Bounded bool
	// Unblock: the process fires lifecycle.UserInput (BLOCKED → READY), by
	// the sender of the message that unblocks it, then Wake applies.
	Unblock bool
	// Wake: the process is put on the wake queue, unless it is there
	// already (its queued mark is set).
	Wake bool
	// Interrupt: the message is stored, and the node running the
	// process's turn is signalled to cut its model call in flight (a
	// user's message to a RUNNING process whose steering is
	// SteeringInterrupt); the turn then drains it (Steers).
	Interrupt bool
}

// Waiting is what a BLOCKED process waits for (the record's waiting_for).
type Waiting string

// What a BLOCKED process may wait for.
const (
	// WaitingUser: a person's message, the answer to its respond; the
	// zero value.
	WaitingUser Waiting = ""
	// WaitingApproval: the decisions on tool calls that need a person's
	// approval before they run.
	WaitingApproval Waiting = "approval"
)

// OnPost returns what a message of kind does when it is posted to a process
// in state ("" for no process) that waits for waiting when BLOCKED and
// takes a user's messages as steering says while a turn runs.
func OnPost(state lifecycle.State, waiting Waiting, kind conversation.Kind, steering Steering) Effect {
	switch state {
	case "":
		return Effect{Err: ErrNotFound}
	case lifecycle.Done, lifecycle.Failed:
		return Effect{Err: ErrClosed}
	case lifecycle.Running:
		if kind == conversation.KindUser && steering == SteeringReject {
			return Effect{Err: ErrBusy}
		}
	}
	e := Effect{Bounded: bounded(state, waiting, kind)}
	switch {
	case state == lifecycle.Ready:
		e.Wake = true
	case state == lifecycle.Blocked && Unblocks(kind, waiting):
		e.Unblock, e.Wake = true, true
	case state == lifecycle.Running && kind == conversation.KindUser && steering == SteeringInterrupt:
		e.Interrupt = true
	}
	return e
}

// bounded reports whether a message of kind posted to a process in state
// counts against the inbox limit. A worker's result and a system notice
// never do (nothing may lose them, and a process's workers bound them); a
// user or operator message to a BLOCKED process does not either: it wakes
// the process, whose next turn drains the inbox whole, so that timer ticks
// that piled up meanwhile never lock the user out.
func bounded(state lifecycle.State, waiting Waiting, kind conversation.Kind) bool {
	switch {
	case kind == conversation.KindProcessEvent, kind == conversation.KindSystem, kind == conversation.KindApproval:
		return false
	case state == lifecycle.Blocked && Unblocks(kind, waiting):
		return false
	}
	return true
}

// Unblocks reports whether a message of kind unblocks a BLOCKED process
// that waits for waiting: an operator's always does, and an approval
// decision; a user's does unless the process waits for approval (its turn
// cannot go on before the decisions: the user's message waits for them);
// a worker's result, a timer's tick and a system notice wait for one of
// them. (An approval is taken only for a call that waits for one: see
// Memory.Decide and the store's post.)
func Unblocks(kind conversation.Kind, waiting Waiting) bool {
	switch kind {
	case conversation.KindOperator, conversation.KindApproval:
		return true
	case conversation.KindUser:
		return waiting != WaitingApproval
	}
	return false
}

// AfterChange returns what the wake rule makes of a process that has just
// changed state (a turn's commit, a resume, a retry) and whose inbox holds
// messages of the kinds pending, oldest first: a READY process with
// anything pending wakes; a BLOCKED one with a message pending that
// unblocks it (Unblocks) is unblocked, by the sender of the first such
// message, and wakes. Any other state waits as it is.
func AfterChange(state lifecycle.State, waiting Waiting, pending []conversation.Kind) Effect {
	switch {
	case state == lifecycle.Ready && len(pending) > 0:
		return Effect{Wake: true}
	case state == lifecycle.Blocked && slices.ContainsFunc(pending, func(k conversation.Kind) bool { return Unblocks(k, waiting) }):
		return Effect{Unblock: true, Wake: true}
	}
	return Effect{}
}
