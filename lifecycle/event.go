package lifecycle

import (
	"fmt"
	"slices"
)

// Event moves a process from one state to another. Its values are the
// lower-case names recorded in the conversation log.
type Event string

// The events of the lifecycle. See the package comment for their table.
const (
	// Wake starts a turn: READY → RUNNING.
	Wake Event = "wake"
	// AwaitUser ends a turn waiting for the user: RUNNING → BLOCKED.
	AwaitUser Event = "await_user"
	// Continue ends a turn with more work to do: RUNNING → READY.
	Continue Event = "continue"
	// UserInput unblocks on a user or operator message: BLOCKED → READY.
	UserInput Event = "user_input"
	// Pause holds a live process: READY, RUNNING, BLOCKED → PAUSED.
	Pause Event = "pause"
	// Resume releases a hold: PAUSED → the state it left (RUNNING as READY).
	Resume Event = "resume"
	// Finish closes a process: RUNNING, READY, BLOCKED, PAUSED → DONE.
	Finish Event = "finish"
	// Fail stops a turn on an unrecoverable error: RUNNING → FAILED.
	Fail Event = "fail"
	// Retry gives a failed process another go: FAILED → READY.
	Retry Event = "retry"
	// Recover takes over a process whose node died: RUNNING → READY.
	Recover Event = "recover"
)

// allEvents lists every event in documentation order. Never modified.
var allEvents = []Event{Wake, AwaitUser, Continue, UserInput, Pause, Resume, Finish, Fail, Retry, Recover}

// Events returns every event, in documentation order.
func Events() []Event { return slices.Clone(allEvents) }

// ParseEvent returns the Event spelled s, which must be one of the lower-case
// event names exactly. The error matches [ErrInvalid].
func ParseEvent(s string) (Event, error) {
	ev := Event(s)
	if !ev.valid() {
		return "", fmt.Errorf("%w: event %q: want one of %s", ErrInvalid, s, joinQuoted(allEvents))
	}
	return ev, nil
}

// String returns the event's name.
func (e Event) String() string { return string(e) }

func (e Event) valid() bool { return slices.Contains(allEvents, e) }
