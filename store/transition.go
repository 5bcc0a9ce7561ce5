package store

import (
	"context"
	"fmt"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
)

// transitionAttempts bounds Transition's read-and-write rounds: one, and
// three retries when the record moved in between.
const transitionAttempts = 4

// Transition fires an operator's or user's event on process pid: pause,
// resume, finish (stop), retry or fail. It reads the record, asks
// lifecycle.Fire, and writes the new status with a state_change event
// (by by) if the record's version has not moved meanwhile; otherwise it
// reads again, up to three times, then returns ErrConflict. After resume
// and retry the wake rule runs, so messages that arrived while the process
// was paused or failed are judged as if they had just arrived.
//
// An event the lifecycle forbids returns its error (errors.Is
// lifecycle.ErrForbidden). Pausing, closing or failing a RUNNING process
// changes the record and tells the node running its turn (Signals), which
// ends the turn at once; its Commit keeps the new state.
// The turn events (wake, await_user, continue, user_input, recover) belong
// to Claim, Commit and the wake rule and are refused here.
func (s *Store) Transition(ctx context.Context, pid string, ev lifecycle.Event, by string) (lifecycle.Transition, Record, error) {
	switch ev {
	case lifecycle.Pause, lifecycle.Resume, lifecycle.Finish, lifecycle.Retry, lifecycle.Fail:
	default:
		return lifecycle.Transition{}, Record{}, fmt.Errorf("store: transition %s: %w: event %q is fired by the runtime; want pause, resume, finish, retry or fail",
			pid, lifecycle.ErrInvalid, ev)
	}
	wake := "0"
	if ev == lifecycle.Resume || ev == lifecycle.Retry {
		wake = "1"
	}
	for range transitionAttempts {
		rec, err := s.Get(ctx, pid)
		if err != nil {
			return lifecycle.Transition{}, Record{}, err
		}
		now := s.now()
		tr, st, err := lifecycle.Fire(ctx, rec.Status, ev, by, now)
		if err != nil {
			return lifecycle.Transition{}, Record{}, fmt.Errorf("store: transition %s: %w", pid, err)
		}
		change, err := encodeEvent(stamped(conversation.NewStateChange(string(tr.From), string(tr.To), string(tr.Event)), now, "", by))
		if err != nil {
			return lifecycle.Transition{}, Record{}, err
		}
		args := s.processArgs(pid, now)
		args = append(args, rec.Version, string(rec.Status.State), string(st.State), string(st.PausedFrom), change, wake)
		status, res, err := s.run(ctx, s.scripts.transition, s.keys.processKeys(pid), args...)
		switch {
		case err != nil:
			return lifecycle.Transition{}, Record{}, fmt.Errorf("store: transition %s: %w", pid, err)
		case status == "CONFLICT":
			continue
		case status == "NOTFOUND":
			return lifecycle.Transition{}, Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
		case status != "OK" || len(res) < 1:
			return lifecycle.Transition{}, Record{}, fmt.Errorf("store: transition %s: unexpected reply %q", pid, status)
		}
		after, err := parseRecord(pid, hash(res[0]))
		return tr, after, err
	}
	return lifecycle.Transition{}, Record{}, fmt.Errorf("%w: process %s: %s: the record changed %d times in a row",
		ErrConflict, pid, ev, transitionAttempts)
}
