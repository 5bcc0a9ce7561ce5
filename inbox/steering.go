package inbox

import (
	"fmt"

	"github.com/engine-brain/brain/conversation"
)

// Steering is what a user's message does to a process while a turn of it
// runs: the recipe's steering.user_messages, which the process keeps from
// its creation (the store's record holds it). It takes part in the wake
// rule (OnPost) only then; in any other state a user's message is judged as
// it always is. An operator's message always steers, whatever the
// steering (Steers).
type Steering string

// The ways a running turn may take a user's messages. The zero value "" is
// SteeringQueue, as a record or a recipe that says nothing.
const (
	// SteeringQueue: the message waits in the inbox for the next turn; the
	// default.
	SteeringQueue Steering = "queue"
	// SteeringSteer: the running turn drains the message between its rounds
	// (Steers), so the model reads it at its next call.
	SteeringSteer Steering = "steer"
	// SteeringInterrupt: as SteeringSteer, and the node running the turn is
	// signalled at once to cut the model call in flight (Effect.Interrupt),
	// so the model reads the message without waiting for an answer it may
	// no longer need.
	SteeringInterrupt Steering = "interrupt"
	// SteeringReject: the message is refused with a *BusyError (ErrBusy)
	// and nothing is stored, for clients that must not send a second
	// message before the first is answered.
	SteeringReject Steering = "reject"
)

// Steerings returns every Steering, the default first.
func Steerings() []Steering {
	return []Steering{SteeringQueue, SteeringSteer, SteeringInterrupt, SteeringReject}
}

// Validate reports whether s is one of Steerings or "" (SteeringQueue).
func (s Steering) Validate() error {
	switch s {
	case "", SteeringQueue, SteeringSteer, SteeringInterrupt, SteeringReject:
		return nil
	}
	return fmt.Errorf("inbox: steering %q: want queue, steer, interrupt or reject", string(s))
}

// Steers reports whether a running turn of a process with steering s
// drains a message of kind between its rounds, instead of leaving it for
// the next turn: an operator's always, a user's when s is SteeringSteer or
// SteeringInterrupt. Any other kind (a worker's result, a timer's tick, a
// system notice, an approval decision) waits for the next turn.
func Steers(kind conversation.Kind, s Steering) bool {
	switch kind {
	case conversation.KindOperator:
		return true
	case conversation.KindUser:
		return s == SteeringSteer || s == SteeringInterrupt
	}
	return false
}
