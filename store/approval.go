package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/inbox"
)

// Approvals returns the records of the processes whose tool calls wait for
// a person's approval (Record.Approvals), by id: the indexes a commit
// keeps of them in each partition, read in one round trip more.
func (s *Store) Approvals(ctx context.Context) ([]Record, error) {
	index := make([]*redis.StringSliceCmd, len(s.keys.bases))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for n := range index {
			index[n] = p.SMembers(ctx, s.keys.waiting(n))
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("store: approvals: %w", err)
	}
	var pids []string
	for _, c := range index {
		pids = append(pids, c.Val()...)
	}
	slices.Sort(pids)
	cmds := make([]*redis.MapStringStringCmd, len(pids))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, pid := range pids {
			cmds[i] = p.HGetAll(ctx, s.keys.proc(pid))
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
