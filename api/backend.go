package api

import (
	"context"
	"time"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// Backend is what the server needs of a node. *brain.Node satisfies it.
type Backend interface {
	// Create creates a process; with Input it starts READY, without it
	// waits BLOCKED for the user.
	Create(ctx context.Context, p brain.NewProcess) (store.Record, error)
	Get(ctx context.Context, pid string) (store.Record, error)
	List(ctx context.Context, state lifecycle.State, after string, limit int) ([]store.Record, string, error)
	// ListOwned is List of the processes owner created.
	ListOwned(ctx context.Context, owner string, state lifecycle.State, after string, limit int) ([]store.Record, string, error)
	// ListWorkers is List of the workers process parent started.
	ListWorkers(ctx context.Context, parent string, state lifecycle.State, after string, limit int) ([]store.Record, string, error)
	// Send posts a user message and returns its inbox id; a repeated
	// idempotency key returns the first message's id.
	Send(ctx context.Context, pid, from, content, idempotencyKey string) (string, error)
	// Steer posts an operator message and returns its inbox id.
	Steer(ctx context.Context, pid, from, content, idempotencyKey string) (string, error)
	// Decide posts a person's decision on a tool call waiting for approval
	// and returns its inbox id; a repeated idempotency key returns the
	// first message's id. A call that waits for no decision (decided
	// already, or never waiting) is refused with an *inbox.NotPendingError.
	Decide(ctx context.Context, pid, from string, d conversation.ApprovalDecision, idempotencyKey string) (string, error)
	// Approvals returns the records of the processes whose tool calls wait
	// for a person's approval.
	Approvals(ctx context.Context) ([]store.Record, error)
	Transition(ctx context.Context, pid string, ev lifecycle.Event, by string) (store.Record, error)
	// Delete removes a process and everything it has, its workers
	// included, and returns its record as it was and the workers' ids;
	// store.ErrRunning while a turn of any of them runs.
	Delete(ctx context.Context, pid string) (store.Record, []string, error)
	// Log returns up to limit events after event id after (0 = all).
	Log(ctx context.Context, pid, after string, limit int) ([]conversation.Event, error)
	// LogBefore returns, oldest first, up to limit events right before
	// event id before (the newest when before is empty), and whether
	// there may be more before them.
	LogBefore(ctx context.Context, pid, before string, limit int) ([]conversation.Event, bool, error)
	// Follow waits up to block for events after event id after.
	Follow(ctx context.Context, pid, after string, block time.Duration) ([]conversation.Event, error)
	// Watch returns the progress updates of pid's running turns, from
	// whichever node runs them, until ctx ends; the channel is closed when
	// ctx ends. Updates published before the call are not replayed.
	Watch(ctx context.Context, pid string) (<-chan live.Update, error)
	// Inbox returns the messages waiting in a process's inbox, oldest
	// first.
	Inbox(ctx context.Context, pid string) ([]store.Message, error)
	// Timers returns the timers of a process, by due time.
	Timers(ctx context.Context, pid string) ([]store.Timer, error)
	// ScheduleWakeup arms a timer on process c.ProcessID and returns its id
	// and first due time; the error of a wakeup that cannot be armed (a
	// cron expression that does not parse) wraps tools.ErrInvalidArguments.
	ScheduleWakeup(ctx context.Context, c tools.Caller, w tools.Wakeup) (string, time.Time, error)
	// CancelWakeup cancels timer id of process c.ProcessID;
	// store.ErrNotFound when it has none by that id.
	CancelWakeup(ctx context.Context, c tools.Caller, id string) error
	Recipes() *recipes.Library
	// Ping reports whether Redis answers.
	Ping(ctx context.Context) error
}
