package inbox

import "context"

// An Inbox takes the messages of processes and applies the wake rule (the
// package comment) to each. *Memory is one; the Redis store (package store)
// is the other. Both pass the conformance suite of package inboxtest.
type Inbox interface {
	// Post adds m to the inbox of process pid and returns its id. A
	// repeated idempotency key returns the first message's id and dup=true,
	// adding nothing. An unknown process is refused with ErrNotFound, a
	// DONE or FAILED one with ErrClosed, a user's message to a RUNNING one
	// whose steering is SteeringReject with a *BusyError (ErrBusy), a full
	// inbox with a *FullError (ErrFull).
	Post(ctx context.Context, pid string, m Message) (id string, dup bool, err error)
	// Inbox returns the pending messages of process pid, oldest first;
	// ErrNotFound for an unknown process.
	Inbox(ctx context.Context, pid string) ([]Message, error)
}
