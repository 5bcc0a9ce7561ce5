package inbox

import (
	"errors"
	"fmt"
)

// The refusals of an inbox. Returned errors wrap them with the process;
// match them with errors.Is.
var (
	// ErrNotFound: no process by that id.
	ErrNotFound = errors.New("inbox: not found")
	// ErrClosed: the process is DONE or FAILED and takes no messages.
	ErrClosed = errors.New("inbox: closed")
	// ErrFull: the process's inbox holds its limit of messages already and
	// the message counts against it (Effect.Bounded); nothing was stored.
	// Post again once the process has read them. The error is a
	// *FullError.
	ErrFull = errors.New("inbox: full")
)

// FullError is a message refused because the inbox of process PID holds
// Limit messages already. It matches ErrFull.
type FullError struct {
	PID   string
	Limit int
}

func (e *FullError) Error() string {
	return fmt.Sprintf("inbox: full: process %s has %d messages waiting, its inbox limit", e.PID, e.Limit)
}

// Is makes errors.Is(err, ErrFull) true for a *FullError.
func (e *FullError) Is(target error) bool { return target == ErrFull }
