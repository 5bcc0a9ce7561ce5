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
	// ErrNotPending: an approval decision names a call that waits for no
	// decision: not one of the process's pending calls, or decided
	// already. Nothing was stored. The error is a *NotPendingError.
	ErrNotPending = errors.New("inbox: not pending")
	// ErrBusy: a user's message to a process that is running a turn, whose
	// recipe refuses them meanwhile (SteeringReject). Nothing was stored.
	// Send it again once the turn has ended. The error is a *BusyError.
	ErrBusy = errors.New("inbox: busy")
	// ErrOperatorOnly: a user's decision on a call that an operator must
	// decide (the recipe's approval.by). Nothing was stored. The error is
	// an *OperatorOnlyError.
	ErrOperatorOnly = errors.New("inbox: an operator must decide this call")
)

// BusyError is a user's message refused because process PID is running a
// turn and its steering is SteeringReject. It matches ErrBusy.
type BusyError struct{ PID string }

func (e *BusyError) Error() string {
	return fmt.Sprintf("inbox: busy: process %s is running a turn and refuses a user's messages meanwhile", e.PID)
}

// Is makes errors.Is(err, ErrBusy) true for a *BusyError.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// OperatorOnlyError is a user's decision refused because call CallID of
// process PID waits for an operator's. It matches ErrOperatorOnly.
type OperatorOnlyError struct{ PID, CallID string }

func (e *OperatorOnlyError) Error() string {
	return fmt.Sprintf("inbox: call %s of process %s waits for an operator's decision", e.CallID, e.PID)
}

// Is makes errors.Is(err, ErrOperatorOnly) true for an *OperatorOnlyError.
func (e *OperatorOnlyError) Is(target error) bool { return target == ErrOperatorOnly }

// NotPendingError is an approval decision refused because call CallID of
// process PID waits for none. Decided says it was decided already.
type NotPendingError struct {
	PID, CallID string
	Decided     bool
}

func (e *NotPendingError) Error() string {
	if e.Decided {
		return fmt.Sprintf("inbox: not pending: call %s of process %s was decided already", e.CallID, e.PID)
	}
	return fmt.Sprintf("inbox: not pending: process %s has no call %s waiting for approval", e.PID, e.CallID)
}

// Is makes errors.Is(err, ErrNotPending) true for a *NotPendingError.
func (e *NotPendingError) Is(target error) bool { return target == ErrNotPending }

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
