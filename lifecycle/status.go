package lifecycle

import "fmt"

// Status is the lifecycle part of a process record: its state and, while
// PAUSED, the state it left. Store both fields; a machine is rebuilt from
// them.
type Status struct {
	State State
	// PausedFrom is the state the process was paused in (READY, RUNNING or
	// BLOCKED), or empty. It is set only while State is PAUSED; a PAUSED
	// status without it resumes as READY.
	PausedFrom State
}

// Validate reports whether s is a status a process can be in. The error
// matches [ErrInvalid] and says which field is wrong.
func (s Status) Validate() error {
	if !s.State.valid() {
		return fmt.Errorf("%w: status: state %q: want one of %s", ErrInvalid, string(s.State), joinQuoted(allStates))
	}
	switch {
	case s.State == Paused && s.PausedFrom != "" && !s.PausedFrom.Live():
		return fmt.Errorf("%w: status: paused_from %q: want %q, %q, %q or empty",
			ErrInvalid, string(s.PausedFrom), string(Ready), string(Running), string(Blocked))
	case s.State != Paused && s.PausedFrom != "":
		return fmt.Errorf("%w: status: paused_from %q is set on a %s process: only a PAUSED process records it",
			ErrInvalid, string(s.PausedFrom), string(s.State))
	}
	return nil
}

// String returns the state, with the state it left when paused:
// "PAUSED (from RUNNING)".
func (s Status) String() string {
	if s.PausedFrom == "" {
		return string(s.State)
	}
	return fmt.Sprintf("%s (from %s)", string(s.State), string(s.PausedFrom))
}
