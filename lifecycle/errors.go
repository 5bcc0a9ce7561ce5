package lifecycle

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrForbidden is matched (errors.Is) by every [*TransitionError]: the
	// event is not allowed in the current state.
	ErrForbidden = errors.New("lifecycle: transition not allowed")

	// ErrInvalid is matched by errors about values that are not part of the
	// lifecycle at all: an unknown state or event name, an inconsistent
	// [Status], a transition fired without its actor or time.
	ErrInvalid = errors.New("lifecycle: invalid")
)

// TransitionError reports an event that is not allowed in a state. It
// matches [ErrForbidden] with errors.Is.
type TransitionError struct {
	State State // the state the process was in; unchanged
	Event Event // the event that was refused
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("lifecycle: event %q is not allowed in state %s", string(e.Event), string(e.State))
}

// Is makes errors.Is(err, ErrForbidden) true for a *TransitionError.
func (e *TransitionError) Is(target error) bool { return target == ErrForbidden }

// joinQuoted renders names as `"a", "b", "c"` for error messages.
func joinQuoted[S ~string](names []S) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", string(n))
	}
	return b.String()
}
