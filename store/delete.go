package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/engine-brain/brain/lifecycle"
)

// errKept says that DeleteFinished's condition no longer held when it came
// to delete: the process was retried, or changed since it was listed.
var errKept = errors.New("store: process kept")

// Delete removes process pid and everything it has: its record, inbox,
// log, idempotency keys and timers, and its entries in the state, owner
// and timer indexes. It returns the record as it was. It refuses, with
// ErrRunning, while a turn holds the process's lease (a node whose lease
// expired finds the process gone and writes nothing: ErrFenced). A worker
// of the process is a process of its own and stays; what it reports to a
// deleted parent is dropped.
func (s *Store) Delete(ctx context.Context, pid string) (Record, error) {
	return s.delete(ctx, pid, "")
}

// delete is Delete; with finishedBefore (unix ms; "" for none) only of a
// DONE or FAILED process last changed before then (else errKept), checked
// in the same step as the deletion.
func (s *Store) delete(ctx context.Context, pid, finishedBefore string) (Record, error) {
	if !validID(pid) {
		return Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	args := append(s.processArgs(pid, s.now()), finishedBefore)
	status, res, err := s.run(ctx, s.scripts.delete, processKeys(pid), args...)
	switch {
	case err != nil:
		return Record{}, fmt.Errorf("store: delete %s: %w", pid, err)
	case status == "NOTFOUND":
		return Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	case status == "RUNNING":
		return Record{}, fmt.Errorf("%w: process %s: try again when its turn has ended", ErrRunning, pid)
	case status == "KEPT":
		return Record{}, fmt.Errorf("%w: %s", errKept, pid)
	case status != "OK" || len(res) < 1:
		return Record{}, fmt.Errorf("store: delete %s: unexpected reply %q", pid, status)
	}
	return parseRecord(pid, hash(res[0]))
}

// finishedPage is how many records DeleteFinished reads at a time.
const finishedPage = 500

// DeleteFinished deletes the DONE and FAILED processes that have not
// changed since before cutoff (Delete), and returns how many it deleted.
// It walks the two state indexes from the oldest process and stops at the
// first created after cutoff; each deletion checks again, in the same step,
// that the process is still finished and unchanged since before cutoff, so
// a process retried meanwhile stays.
func (s *Store) DeleteFinished(ctx context.Context, cutoff time.Time) (int, error) {
	deleted := 0
	for _, st := range []lifecycle.State{lifecycle.Done, lifecycle.Failed} {
		n, err := s.deleteFinishedIn(ctx, st, cutoff)
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// deleteFinishedIn is DeleteFinished for the processes in state st.
func (s *Store) deleteFinishedIn(ctx context.Context, st lifecycle.State, cutoff time.Time) (int, error) {
	before := strconv.FormatInt(cutoff.UnixMilli(), 10)
	deleted, after := 0, ""
	for {
		recs, next, err := s.List(ctx, st, after, finishedPage)
		if err != nil {
			return deleted, err
		}
		for _, rec := range recs {
			if rec.CreatedAt.After(cutoff) { // and so is every one after it
				return deleted, nil
			}
			if !rec.UpdatedAt.Before(cutoff) {
				continue
			}
			switch _, err := s.delete(ctx, rec.ID, before); {
			case err == nil:
				deleted++
			case errors.Is(err, errKept), errors.Is(err, ErrNotFound), errors.Is(err, ErrRunning):
				// changed meanwhile, deleted by another node, or a stopped
				// turn still committing: the next pass decides
			default:
				return deleted, err
			}
		}
		if next == "" {
			return deleted, nil
		}
		after = next
	}
}
