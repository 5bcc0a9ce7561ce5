package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/inbox"
)

// Approvals returns the records of the processes whose tool calls wait for
// a person's approval (Record.Approvals), by id: the index a commit keeps
// of them, read in one round trip more.
func (s *Store) Approvals(ctx context.Context) ([]Record, error) {
	pids, err := s.rdb.SMembers(ctx, approvalsIndex).Result()
	if err != nil {
		return nil, fmt.Errorf("store: approvals: %w", err)
	}
	slices.Sort(pids)
	cmds := make([]*redis.MapStringStringCmd, len(pids))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, pid := range pids {
			cmds[i] = p.HGetAll(ctx, procKey(pid))
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("store: approvals: %w", err)
	}
	out := make([]Record, 0, len(pids))
	for i, pid := range pids {
		h := cmds[i].Val()
		if len(h) == 0 {
			continue // deleted since
		}
		r, err := parseRecord(pid, h)
		if err != nil {
			return nil, err
		}
		if r.Waiting == inbox.WaitingApproval {
			out = append(out, r)
		}
	}
	return out, nil
}
