package lifecycle

import (
	"fmt"
	"slices"
)

// State is the lifecycle state of a process. Its values are the upper-case
// words stored in process records.
type State string

// The states of a process.
const (
	// Ready waits for a wake: it is woken by any inbox message.
	Ready State = "READY"
	// Running is running a turn on one node, under a lease.
	Running State = "RUNNING"
	// Blocked waits for the user: only a user or operator message wakes it.
	Blocked State = "BLOCKED"
	// Paused is held by an operator.
	Paused State = "PAUSED"
	// Done is finished for good.
	Done State = "DONE"
	// Failed stopped on an unrecoverable error; an operator may retry it.
	Failed State = "FAILED"
)

// allStates lists every state in documentation order. Never modified.
var allStates = []State{Ready, Running, Blocked, Paused, Done, Failed}

// States returns every state, in documentation order.
func States() []State { return slices.Clone(allStates) }

// ParseState returns the State spelled s, which must be one of the upper-case
// state names exactly. The error matches [ErrInvalid].
func ParseState(s string) (State, error) {
	st := State(s)
	if !st.valid() {
		return "", fmt.Errorf("%w: state %q: want one of %s", ErrInvalid, s, joinQuoted(allStates))
	}
	return st, nil
}

// Live reports whether a process in state s is active and can be paused:
// READY, RUNNING or BLOCKED.
func (s State) Live() bool {
	switch s {
	case Ready, Running, Blocked:
		return true
	}
	return false
}

// Terminal reports whether no event can leave state s. Only DONE is terminal;
// FAILED can be retried.
func (s State) Terminal() bool { return s == Done }

// String returns the state's name.
func (s State) String() string { return string(s) }

func (s State) valid() bool { return slices.Contains(allStates, s) }
