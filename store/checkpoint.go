package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/engine-brain/brain/conversation"
)

// Checkpoint appends events of the claim's turn to the log, if the claim
// still holds the lease and the newest fencing token; otherwise it writes
// nothing and returns ErrFenced. Invalid events write nothing either.
func (s *Store) Checkpoint(ctx context.Context, c *Claim, events []conversation.Event) error {
	now := s.now()
	evs, err := encodeEvents(events, now)
	if err != nil {
		return fmt.Errorf("store: checkpoint %s: %w", c.Record.ID, err)
	}
	args := s.processArgs(c.Record.ID, now)
	args = append(args, c.leaseValue(), strconv.FormatInt(c.Token, 10), c.knownLen())
	args = append(args, evs...)
	status, res, err := s.run(ctx, s.scripts.checkpoint, processKeys(c.Record.ID)[:3], args...)
	switch {
	case err != nil:
		return fmt.Errorf("store: checkpoint %s: %w", c.Record.ID, err)
	case status == "FENCED":
		return fmt.Errorf("%w: process %s: claim %s", ErrFenced, c.Record.ID, c.leaseValue())
	case status != "OK" || len(res) < 1:
		return fmt.Errorf("store: checkpoint %s: unexpected reply %q", c.Record.ID, status)
	}
	c.appended(str(res[0]) == "1", events, strs(res[1:]), now)
	c.tokens = c.tokens.plus(events)
	return nil
}
