package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

var _ tools.Scheduler = (*Node)(nil)

// ScheduleWakeup arms a timer for the schedule_wakeup tool (and the API's
// POST /v1/processes/{id}/timers): at its due time a schedule message with
// w.Message is posted to the caller's inbox; a cron timer is re-armed
// after each firing.
//
// A call with a key (c.CallKey: a tool call's) arms the timer whose id
// derives from it, so a call made again arms the same timer, and not at
// all when it was a one-shot that has fired (tools.ErrWakeupFired).
func (n *Node) ScheduleWakeup(ctx context.Context, c tools.Caller, w tools.Wakeup) (string, time.Time, error) {
	now := n.cfg.Clock()
	t := inbox.Timer{PID: c.ProcessID, Cron: w.Cron, At: w.At, Message: w.Message}
	if w.In > 0 {
		t.At = now.Add(w.In)
	}
	t, err := inbox.Arm(t, c.CallKey, now)
	if bad := (*inbox.WakeupError)(nil); errors.As(err, &bad) {
		return "", time.Time{}, tools.InvalidArguments(bad.Reason)
	} else if err != nil {
		return "", time.Time{}, err
	}
	put := n.store.PutTimer
	if c.CallKey != "" {
		put = n.store.PutTimerOnce
	}
	if err := put(ctx, t); errors.Is(err, store.ErrTimerFired) {
		return t.ID, t.Due, fmt.Errorf("%w: %w", tools.ErrWakeupFired, err)
	} else if err != nil {
		return "", time.Time{}, err
	}
	return t.ID, t.Due, nil
}

// CancelWakeup cancels a timer of the caller. A timer that is not there
// gets an error (wrapping store.ErrNotFound) whose text suits a model that
// cancels it again: a resumed turn's cancel_wakeup, run again, finds it
// gone.
func (n *Node) CancelWakeup(ctx context.Context, c tools.Caller, id string) error {
	err := n.store.CancelTimer(ctx, c.ProcessID, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("wakeup %s is not scheduled: it was cancelled, or it fired and does not repeat, or it is not an id schedule_wakeup returned (%w)", id, err)
	}
	return err
}

// Timers returns the timers of process pid, by due time.
func (n *Node) Timers(ctx context.Context, pid string) ([]store.Timer, error) {
	return n.store.Timers(ctx, pid)
}

// armSchedules arms the timers of a recipe's wakeup.schedules for a new
// process; their ids are stable ("recipe-0", ...).
func (n *Node) armSchedules(ctx context.Context, pid string, r *recipes.Recipe) error {
	now := n.cfg.Clock()
	for i, s := range r.Wakeup.Schedules {
		t := inbox.Timer{ID: fmt.Sprintf("recipe-%d", i), PID: pid, Cron: s.Cron, Message: s.Message}
		due, err := t.Next(now)
		if err != nil {
			return fmt.Errorf("wakeup.schedules[%d]: %w", i, err)
		}
		t.Due = due
		if err := n.store.PutTimer(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// fireTimers fires every due timer. Each firing is claimed atomically, so
// across all nodes a due time fires exactly once.
func (n *Node) fireTimers(ctx context.Context) error {
	_, err := n.FireDueTimers(ctx)
	return err
}

// FireDueTimers fires the timers due at the node's clock and returns how
// many it fired. The timer loop calls it every second; tests call it with
// a controlled Clock.
func (n *Node) FireDueTimers(ctx context.Context) (int, error) {
	now := n.cfg.Clock()
	due, err := n.store.DueTimers(ctx, now, 100)
	if err != nil {
		return 0, err
	}
	fired := 0
	for _, t := range due {
		next, err := t.Next(now)
		if err != nil {
			n.log.Warn("dropping a timer with a bad cron", zap.String("process", t.PID), zap.String("timer", t.ID), zap.Error(err))
		}
		ok, err := n.store.FireTimer(ctx, t, next)
		if errors.Is(err, store.ErrInboxFull) {
			n.log.Warn("schedule tick dropped: the inbox is full", zap.String("process", t.PID), zap.String("timer", t.ID), zap.Int("inbox_limit", n.cfg.InboxLimit))
			n.cfg.Metrics.inboxFull(conversation.KindSchedule)
		} else if err != nil {
			return fired, err
		}
		if ok {
			fired++
		}
	}
	return fired, nil
}
