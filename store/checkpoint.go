package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/engine-brain/brain/conversation"
)

// Checkpoint appends events of the claim's turn to the log, if the claim
// still holds the lease and the newest fencing token; otherwise it writes
// nothing and returns ErrFenced. Invalid events write nothing either.
func (s *Store) Checkpoint(ctx context.Context, c *Claim, events []conversation.Event) error {
	_, err := s.checkpoint(ctx, c, events, nil)
	return err
}

// Steer is Checkpoint, and in the same step drains into the log the inbox
// messages of kinds that arrived while the turn ran (inbox.Steers says
// which kinds steer a running turn): each becomes an inbox_message event
// marked DuringTurn, after events, and leaves the inbox, so that it is
// applied exactly once whatever node dies when. Messages of other kinds
// stay for the next turn. It returns the drained messages' events.
func (s *Store) Steer(ctx context.Context, c *Claim, events []conversation.Event, kinds ...conversation.Kind) ([]conversation.Event, error) {
	return s.checkpoint(ctx, c, events, kinds)
}

func (s *Store) checkpoint(ctx context.Context, c *Claim, events []conversation.Event, kinds []conversation.Kind) ([]conversation.Event, error) {
	now := s.now()
	evs, err := encodeEvents(events, now)
	if err != nil {
		return nil, fmt.Errorf("store: checkpoint %s: %w", c.Record.ID, err)
	}
	args := s.processArgs(c.Record.ID, now)
	args = append(args, c.leaseValue(), strconv.FormatInt(c.Token, 10), c.knownLen())
	keys := s.keys.processKeys(c.Record.ID)[:3]
	if len(kinds) == 0 {
		args = append(args, "")
	} else {
		var b strings.Builder
		for _, k := range kinds {
			b.WriteString(" " + string(k))
		}
		args = append(args, b.String()+" ", c.TurnID)
		keys = s.keys.processKeys(c.Record.ID)[:4]
	}
	args = append(args, evs...)
	status, res, err := s.run(ctx, s.scripts.checkpoint, keys, args...)
	switch {
	case err != nil:
		return nil, fmt.Errorf("store: checkpoint %s: %w", c.Record.ID, err)
	case status == "FENCED":
		return nil, fmt.Errorf("%w: process %s: claim %s", ErrFenced, c.Record.ID, c.leaseValue())
	case status != "OK" || len(res) < 3:
		return nil, fmt.Errorf("store: checkpoint %s: unexpected reply %q", c.Record.ID, status)
	}
	drained, err := s.made(res[2], now)
	if err != nil {
		return nil, fmt.Errorf("store: checkpoint %s: %w", c.Record.ID, err)
	}
	ids := strs(res[1])
	for _, e := range drained {
		ids = append(ids, e.ID)
	}
	c.appended(str(res[0]) == "1", append(events[:len(events):len(events)], drained...), ids, now)
	c.tokens = c.tokens.plus(events)
	return drained, nil
}
