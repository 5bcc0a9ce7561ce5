package chat

import (
	"context"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// Turn is the input of one turn.
type Turn struct {
	// ID identifies the turn; every event of the turn carries it.
	ID     string
	Recipe *recipes.Recipe
	Model  llm.Model
	Tools  *tools.Registry
	// History is the process's log before this turn.
	History []conversation.Event
	// Inbox holds the drained inbox messages as inbox_message events, in
	// arrival order.
	Inbox []conversation.Event
	// Reason says what started the turn ("wake", "recover"); optional.
	Reason string
	// Worker marks a child process: a turn that ends without a reply for a
	// person leaves it READY instead of BLOCKED.
	Worker bool
}

// Checkpointer makes a turn's progress durable. The engine calls it with
// the events added since its previous call: once after draining the inbox,
// before the first model call, and after every round that does not end the
// turn. An error (a lost lease, say) aborts the turn.
type Checkpointer interface {
	Checkpoint(ctx context.Context, events []conversation.Event) error
}

// CheckpointFunc adapts a function to a Checkpointer.
type CheckpointFunc func(ctx context.Context, events []conversation.Event) error

// Checkpoint calls f.
func (f CheckpointFunc) Checkpoint(ctx context.Context, events []conversation.Event) error {
	return f(ctx, events)
}

// Outcome is the result of a turn.
type Outcome struct {
	// Events are all events of the turn, in order.
	Events []conversation.Event
	// Pending are the trailing events no checkpoint has seen: the caller
	// commits them together with the transition.
	Pending []conversation.Event
	// Next is the lifecycle event to fire: AwaitUser or Continue.
	Next lifecycle.Event
}

// Engine runs chat turns. Its zero value is ready to use with the wall
// clock; it holds no per-turn state and is safe for concurrent use.
type Engine struct {
	// Clock stamps events; time.Now when nil.
	Clock func() time.Time
}

func (e *Engine) now() time.Time {
	if e.Clock != nil {
		return e.Clock()
	}
	return time.Now()
}
