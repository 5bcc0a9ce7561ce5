package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
)

// errKept says that DeleteFinished's condition no longer held when it came
// to delete: the process was retried, or changed since it was listed.
var errKept = errors.New("store: process kept")

// errHasWorkers says that a process still had workers when it came to be
// deleted: they go first.
var errHasWorkers = errors.New("store: process has workers")

// Delete removes process pid and everything it has: its record, inbox,
// log, idempotency keys and timers, and its entries in the state, owner
// and timer indexes; and so its workers, theirs, and so on, first (a
// worker belongs to the process that started it). It returns the record
// as it was and the ids of the workers deleted. A worker deleted before it
// finished tells its parent (a process_event whose status is
// conversation.ReportDeleted), unless the parent is being deleted too.
//
// It refuses, with ErrRunning, while a turn of the process or of one of
// its workers holds its lease (a node whose lease expired finds the
// process gone and writes nothing: ErrFenced). Workers deleted before such
// a refusal stay deleted; the process and the rest stay, to delete again
// once the turn has ended.
func (s *Store) Delete(ctx context.Context, pid string) (Record, []string, error) {
	return s.deleteTree(ctx, pid, true)
}

// deleteTree is Delete; tellParent says whether a worker deleted before it
// finished tells its parent.
func (s *Store) deleteTree(ctx context.Context, pid string, tellParent bool) (Record, []string, error) {
	if !validID(pid) {
		return Record{}, nil, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	// A process whose turn is running is refused before any of its
	// workers is touched; its workers, its parent and its recipe (neither
	// ever changes) are read in the same round trip.
	pipe := s.rdb.Pipeline()
	exists, leased := pipe.Exists(ctx, s.keys.proc(pid)), pipe.Exists(ctx, s.keys.lease(pid))
	listed := pipe.ZRange(ctx, s.keys.workers(pid), 0, -1)
	origin := pipe.HMGet(ctx, s.keys.proc(pid), "parent", "recipe")
	if _, err := pipe.Exec(ctx); err != nil {
		return Record{}, nil, fmt.Errorf("store: delete %s: %w", pid, err)
	}
	switch {
	case exists.Val() == 0:
		return Record{}, nil, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	case leased.Val() == 1:
		return Record{}, nil, runningError(pid)
	}
	var deleted []string
	// A worker started between reading the workers and deleting the
	// process makes the deletion refuse (errHasWorkers): read them again.
	// Starting one takes a turn of the process, which makes it refuse with
	// ErrRunning instead, so this ends.
	for workers := listed.Val(); ; {
		for _, w := range workers {
			_, theirs, err := s.deleteTree(ctx, w, false) // their parent, pid, goes too
			deleted = append(deleted, theirs...)
			switch {
			case err == nil:
				deleted = append(deleted, w)
			case errors.Is(err, ErrNotFound):
				// Deleted meanwhile, which took it out of the index; or a
				// record gone without that (deleted by hand in Redis),
				// which would hold the deletion off for good.
				if err := s.rdb.ZRem(ctx, s.keys.workers(pid), w).Err(); err != nil {
					return Record{}, deleted, fmt.Errorf("store: delete %s: %w", pid, err)
				}
			default:
				var we *WorkerError
				if !errors.As(err, &we) { // the deepest worker is named
					err = &WorkerError{Worker: w, Err: err}
				}
				return Record{}, deleted, fmt.Errorf("process %s: %w", pid, err)
			}
		}
		var tell *Notify
		parent, recipe := str(origin.Val()[0]), str(origin.Val()[1])
		if tellParent && parent != "" {
			tell = ReportTo(parent, conversation.ProcessEvent{Child: pid, Recipe: recipe, Status: conversation.ReportDeleted,
				Result: "The worker was deleted before it finished its task; it will not report."})
		}
		rec, err := s.delete(ctx, pid, parent, "", tell)
		if !errors.Is(err, errHasWorkers) {
			return rec, deleted, err
		}
		if workers, err = s.rdb.ZRange(ctx, s.keys.workers(pid), 0, -1).Result(); err != nil {
			return Record{}, deleted, fmt.Errorf("store: delete %s: workers: %w", pid, err)
		}
	}
}

// WorkerError is a deletion refused because of a worker of the process (or
// of one of its workers): ErrRunning while the worker runs a turn.
type WorkerError struct {
	Worker string
	Err    error
}

func (e *WorkerError) Error() string { return "worker " + e.Worker + ": " + e.Err.Error() }
func (e *WorkerError) Unwrap() error { return e.Err }

func runningError(pid string) error {
	return fmt.Errorf("%w: process %s: try again when its turn has ended", ErrRunning, pid)
}

// delete deletes process pid, whose parent is parent ("" for none; it
// never changes), which must have no workers (else errHasWorkers); with
// finishedBefore (unix ms; "" for none) only a DONE or
// FAILED process last changed before then (else errKept), checked in the
// same step as the deletion. tell, when given, is the report its parent
// gets if it had not finished.
func (s *Store) delete(ctx context.Context, pid, parent, finishedBefore string, tell *Notify) (Record, error) {
	if !validID(pid) {
		return Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	now := s.now()
	keys := s.keys.processKeys(pid)
	if parent != "" {
		keys = append(keys, s.keys.workers(parent))
	}
	args := append(s.processArgs(pid, now), finishedBefore)
	if tell != nil {
		nkeys, nargs, err := s.notifyArgs(pid, tell, now)
		if err != nil {
			return Record{}, fmt.Errorf("store: delete %s: %w", pid, err)
		}
		keys, args = append(keys, nkeys...), append(args, nargs...)
	}
	status, res, err := s.run(ctx, s.scripts.delete, keys, args...)
	switch {
	case err != nil:
		return Record{}, fmt.Errorf("store: delete %s: %w", pid, err)
	case status == "NOTFOUND":
		return Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	case status == "RUNNING":
		return Record{}, runningError(pid)
	case status == "KEPT":
		return Record{}, fmt.Errorf("%w: %s", errKept, pid)
	case status == "WORKERS":
		return Record{}, fmt.Errorf("%w: %s", errHasWorkers, pid)
	case status != "OK" || len(res) < 1:
		return Record{}, fmt.Errorf("store: delete %s: unexpected reply %q", pid, status)
	}
	return parseRecord(pid, hash(res[0]))
}

// finishedPage is how many records DeleteFinished reads at a time.
const finishedPage = 500

// DeleteFinished deletes the DONE and FAILED processes that have not
// changed since before cutoff (Delete), and returns how many it deleted.
// A process that still has workers stays until they are deleted (finished
// and old enough themselves, or by hand): its workers come later in the
// walk, so it goes on a later pass.
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
			switch _, err := s.delete(ctx, rec.ID, rec.Parent, before, nil); {
			case err == nil:
				deleted++
			case errors.Is(err, errKept), errors.Is(err, ErrNotFound), errors.Is(err, ErrRunning), errors.Is(err, errHasWorkers):
				// changed meanwhile, deleted by another node, a stopped
				// turn still committing, or workers left: a later pass
				// decides
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
