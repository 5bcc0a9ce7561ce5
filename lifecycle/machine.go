package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/looplab/fsm"
)

// Transition records one allowed event: the entry the conversation log keeps.
type Transition struct {
	From  State
	To    State
	Event Event
	By    string    // who fired it: "user:alice", "operator:bob", "node:n1", "model"
	At    time.Time // when, from the caller's clock
}

// Machine is the state machine of one process, built from its stored
// [Status] by [New].
//
// A Machine is owned by one goroutine: it must not be used concurrently
// (looplab/fsm is not safe for concurrent use). Build one when a transition
// is needed and drop it afterwards; keep none for idle processes.
type Machine struct {
	fsm *fsm.FSM
}

// New builds the machine of a process whose stored status is st. It starts
// no goroutine. The error matches [ErrInvalid] when st is not a valid status.
func New(st Status) (*Machine, error) {
	if err := st.Validate(); err != nil {
		return nil, err
	}
	return &Machine{fsm: fsm.NewFSM(fsmState(st), transitions, nil)}, nil
}

// Status returns the machine's current status, to be stored.
func (m *Machine) Status() Status { return statusOf(m.fsm.Current()) }

// Can reports whether ev is allowed in the machine's current status.
func (m *Machine) Can(ev Event) bool { return m.fsm.Can(string(ev)) }

// Fire applies ev, fired by by (for example "operator:bob") at time at, and
// returns its record. by must not be empty and at must not be the zero time.
//
// An event not allowed in the current status returns a [*TransitionError]
// (matching [ErrForbidden]) and leaves the machine as it was; an unknown
// event or a missing by or at returns an error matching [ErrInvalid]. The
// cancellation of ctx is ignored (see the package comment); its values are
// kept.
func (m *Machine) Fire(ctx context.Context, ev Event, by string, at time.Time) (Transition, error) {
	if by == "" {
		return Transition{}, fmt.Errorf("%w: event %q: by is empty: name who fires it, e.g. \"operator:bob\"", ErrInvalid, string(ev))
	}
	if at.IsZero() {
		return Transition{}, fmt.Errorf("%w: event %q: at is the zero time: pass the time from the clock", ErrInvalid, string(ev))
	}
	from := m.Status()
	// A cancelled context would leave looplab/fsm in InTransitionError for
	// good; with no callbacks registered, nothing inside needs to stop early.
	if err := m.fsm.Event(context.WithoutCancel(ctx), string(ev)); err != nil {
		return Transition{}, eventError(from, ev, err)
	}
	return Transition{From: from.State, To: m.Status().State, Event: ev, By: by, At: at}, nil
}

// eventError turns an error of looplab/fsm's Event into ours.
func eventError(from Status, ev Event, err error) error {
	if _, ok := errors.AsType[fsm.InvalidEventError](err); ok {
		return &TransitionError{State: from.State, Event: ev}
	}
	if _, ok := errors.AsType[fsm.UnknownEventError](err); ok {
		return fmt.Errorf("%w: event %q: want one of %s", ErrInvalid, string(ev), joinQuoted(allEvents))
	}
	// The table has no self-transition and the machine never enters an
	// asynchronous or cancelled transition; these mean a bug here.
	if _, ok := errors.AsType[fsm.NoTransitionError](err); ok {
		return fmt.Errorf("lifecycle: event %q in state %s: self-transition in the table: %w", string(ev), from, err)
	}
	if _, ok := errors.AsType[fsm.InTransitionError](err); ok {
		return fmt.Errorf("lifecycle: event %q in state %s: machine stuck in a previous transition: %w", string(ev), from, err)
	}
	return fmt.Errorf("lifecycle: event %q in state %s: %w", string(ev), from, err)
}

// Fire builds the machine of status st, applies ev fired by by at time at,
// and returns the transition record and the new status to store. Errors are
// those of [New] and [Machine.Fire]. Safe for concurrent use.
func Fire(ctx context.Context, st Status, ev Event, by string, at time.Time) (Transition, Status, error) {
	m, err := New(st)
	if err != nil {
		return Transition{}, Status{}, err
	}
	tr, err := m.Fire(ctx, ev, by, at)
	if err != nil {
		return Transition{}, Status{}, err
	}
	return tr, m.Status(), nil
}

// Can reports whether ev is allowed in status st; false when st is not a
// valid status. Safe for concurrent use.
func Can(st Status, ev Event) bool {
	m, err := New(st)
	if err != nil {
		return false
	}
	return m.Can(ev)
}
