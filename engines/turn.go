package engines

import (
	"context"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/live"
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
	// HistoryView, when not nil, is conversation.ProviderView(History),
	// kept by the caller from turn to turn: the model is then shown it and
	// the view of this turn's events, and a round converts only those, not
	// the whole log.
	HistoryView []conversation.Message
	// HistoryTokens, when not 0, is conversation.ViewTokens(HistoryView),
	// counted by the caller as it kept the view, so that a turn need not
	// count the whole conversation again; 0: the turn counts it.
	HistoryTokens int
	// HistoryOmitted says that History does not start at the beginning of
	// the log (a long log is read back only as far as a model call can be
	// shown): the model is told, as when Fit cuts a view, by
	// conversation.OmittedNote before the first message it is shown.
	HistoryOmitted bool
	// Current is what the turn has committed so far: its start and the
	// drained inbox messages (the caller drains them atomically with the
	// wake), and, when a turn is resumed after its node stopped, the rounds
	// that were checkpointed.
	Current []conversation.Event
	// ContextTokens is the most tokens of the conversation one model call
	// is shown (conversation.Fit); 0 means the recipe's
	// limits.max_context_tokens.
	ContextTokens int
	// TokensUsed is what the process's model calls used before this turn
	// (its record's totals): with this turn's, what the recipe's
	// limits.max_tokens bounds.
	TokensUsed int64
	// TokensToday is what they used today (UTC) before this turn: with
	// this turn's, what the recipe's limits.max_tokens_per_day bounds.
	TokensToday int64
	// Approvals are the tool calls the process waits for a person's
	// decision on (its record's): the turn applies the decisions its inbox
	// brought (Current's approval messages) before anything else.
	Approvals []conversation.PendingCall
	// Halt, when not nil, is closed when the process is paused, stopped or
	// failed while the turn runs: the turn cuts the model call in flight,
	// cancels a running tool that is harmless to run again (its
	// definition's Replayable) or lets any other finish, saves what it has
	// and ends (Outcome.Halted).
	Halt <-chan struct{}
	// Interrupt, when not nil, receives when a message arrived that cuts
	// the model call in flight (a user's, under steering.user_messages:
	// interrupt): the turn keeps what the call wrote and goes on with the
	// next round, which the message reaches (Steerer).
	Interrupt <-chan struct{}
	// Progress, when not nil, receives the turn's live updates: rounds,
	// the text and the answer as they stream, tools.
	Progress live.Sink
	// Models, when not nil, resolves a model section other than the
	// recipe's (a zaphod head's, merged over the recipe's) as the runtime
	// resolved Model; nil: every model call of the turn uses Model.
	Models func(recipes.Model) (llm.Model, error)
}

// Checkpointer makes a turn's progress durable. The engine calls it with
// the events added since its previous call: after recording an answer's tool
// calls, after each tool result, and after every round that does not end the
// turn. An error (a lost lease, say) aborts the turn.
type Checkpointer interface {
	Checkpoint(ctx context.Context, events []conversation.Event) error
}

// Steerer is a Checkpointer that also brings the turn what reached it
// while it ran. Steer checkpoints events and, in the same step, drains the
// inbox messages that steer the running turn (an operator's; a user's, as
// the recipe's steering.user_messages says), returning their events: the
// turn adds them and the next model call sees them. A turn whose
// Checkpointer is not a Steerer sees messages only when it starts.
type Steerer interface {
	Checkpointer
	Steer(ctx context.Context, events []conversation.Event) ([]conversation.Event, error)
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
	// Next is the lifecycle event to fire: AwaitUser, Continue, Finish
	// when a task is done, or Fail (the model provider refused the
	// credentials, the token budget is spent).
	Next lifecycle.Event
	// Finish is the task's result when Next is Finish, and the failure the
	// parent is told of when a task's Next is Fail: the parent of a
	// process of an engine kind with Kind.Task receives it.
	Finish *tools.FinishArgs
	// Cited, with Finish, are the sources the result rests on (its
	// finish_task result carries them too), for the parent's answer.
	Cited []conversation.Citation
	// Rounds counts the model calls of the turn, resumed ones included.
	Rounds int
	// Fitted counts the model calls of this run of the turn that were shown
	// the conversation cut to the recipe's limits.max_context_tokens
	// (conversation.Fit).
	Fitted int
	// TooLong counts the model calls of this run of the turn that the
	// provider refused as too long for the model's context window
	// (provider.ErrContextTooLong); the turn asked such a round again with
	// half as much shown, up to MaxContextShrinks times.
	TooLong int
	// ResumeAt, when not zero, is when the process may call its model
	// again: its day's tokens (limits.max_tokens_per_day) are used, and the
	// turn ended READY (Continue) without calling it. The caller wakes the
	// process then.
	ResumeAt time.Time
	// Approvals, when not empty, are the tool calls that wait for a
	// person's decision (Next is AwaitUser): the caller commits them as
	// what the process waits for, and rejects each at its Deadline.
	Approvals []conversation.PendingCall
	// Halted says the turn ended early because the process was paused,
	// stopped or failed while it ran (Turn.Halt); Next is then Continue,
	// which a new state set meanwhile overrides at the commit.
	Halted bool
}
