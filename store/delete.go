package store

import (
	"context"
	"fmt"
)

// Delete removes process pid and everything it has: its record, inbox,
// log, idempotency keys and timers, and its entries in the state, owner
// and timer indexes. It returns the record as it was. It refuses, with
// ErrRunning, while a turn holds the process's lease (a node whose lease
// expired finds the process gone and writes nothing: ErrFenced). A worker
// of the process is a process of its own and stays; what it reports to a
// deleted parent is dropped.
func (s *Store) Delete(ctx context.Context, pid string) (Record, error) {
	if !validID(pid) {
		return Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	status, res, err := s.run(ctx, s.scripts.delete, processKeys(pid), s.processArgs(pid, s.now())...)
	switch {
	case err != nil:
		return Record{}, fmt.Errorf("store: delete %s: %w", pid, err)
	case status == "NOTFOUND":
		return Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	case status == "RUNNING":
		return Record{}, fmt.Errorf("%w: process %s: try again when its turn has ended", ErrRunning, pid)
	case status != "OK" || len(res) < 1:
		return Record{}, fmt.Errorf("store: delete %s: unexpected reply %q", pid, status)
	}
	return parseRecord(pid, hash(res[0]))
}
