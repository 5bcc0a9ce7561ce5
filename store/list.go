package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/lifecycle"
)

// List limits.
const (
	defaultListLimit = 100
	maxListLimit     = 1000
)

// List returns records in state state ("" = every state), ordered by
// creation time then id, at most limit of them (default 100 when limit <=
// 0, at most 1000). after is the cursor a previous call returned ("" =
// from the start); the returned cursor is "" on the last page. Records that
// change state between pages may be missed or repeated, as with any index
// walked live.
func (s *Store) List(ctx context.Context, state lifecycle.State, after string, limit int) ([]Record, string, error) {
	states := lifecycle.States()
	if state != "" {
		st, err := lifecycle.ParseState(string(state))
		if err != nil {
			return nil, "", fmt.Errorf("store: list: %w", err)
		}
		states = []lifecycle.State{st}
	}
	keys := make([]string, len(states))
	for i, st := range states {
		keys[i] = stateKey(st)
	}
	return s.list(ctx, keys, nil, after, limit)
}

// ListOwned is List of the processes owner created, from their own index:
// the work is bounded by owner's processes, not everyone's. With a state,
// a page looks at a bounded number of owner's processes and may come back
// short with a cursor; follow it for the rest.
func (s *Store) ListOwned(ctx context.Context, owner string, state lifecycle.State, after string, limit int) ([]Record, string, error) {
	if owner == "" {
		return nil, "", fmt.Errorf("store: list: owner is empty")
	}
	return s.listIndex(ctx, ownerKey(owner), state, after, limit)
}

// ListWorkers is List of the workers process parent started, from its
// workers index (as ListOwned, a page with a state may come back short).
func (s *Store) ListWorkers(ctx context.Context, parent string, state lifecycle.State, after string, limit int) ([]Record, string, error) {
	if !validID(parent) {
		return nil, "", fmt.Errorf("%w: process %q", ErrNotFound, parent)
	}
	return s.listIndex(ctx, workersKey(parent), state, after, limit)
}

// listIndex lists the processes of one index, keeping those in state ("":
// every state).
func (s *Store) listIndex(ctx context.Context, key string, state lifecycle.State, after string, limit int) ([]Record, string, error) {
	var keep []any
	if state != "" {
		st, err := lifecycle.ParseState(string(state))
		if err != nil {
			return nil, "", fmt.Errorf("store: list: %w", err)
		}
		keep = []any{string(st)}
	}
	return s.list(ctx, []string{key}, keep, after, limit)
}

// list runs list.lua over the index keys, keeping the records in the
// states of keep (nil: all).
func (s *Store) list(ctx context.Context, keys []string, keep []any, after string, limit int) ([]Record, string, error) {
	switch {
	case limit <= 0:
		limit = defaultListLimit
	case limit > maxListLimit:
		limit = maxListLimit
	}
	var score, id string
	if after != "" {
		ms, pid, ok := strings.Cut(after, ":")
		if _, err := strconv.ParseInt(ms, 10, 64); !ok || err != nil || !validID(pid) {
			return nil, "", fmt.Errorf("store: list: cursor %q is not one List returned", after)
		}
		score, id = ms, pid
	}
	res, err := s.scripts.list.Run(ctx, s.batch, keys, append([]any{limit, score, id}, keep...)...).Slice()
	if err != nil {
		return nil, "", fmt.Errorf("store: list: %w", err)
	}
	if len(res) < 2 {
		return nil, "", fmt.Errorf("store: list: short reply")
	}
	var next string
	if ns := str(res[0]); ns != "" {
		next = ns + ":" + str(res[1])
	}
	recs := make([]Record, 0, (len(res)-2)/3)
	for i := 2; i+2 < len(res); i += 3 {
		r, err := parseRecord(str(res[i]), hash(res[i+1]))
		if err != nil {
			return nil, "", err
		}
		n, _ := res[i+2].(int64)
		r.Inbox = int(n)
		recs = append(recs, r)
	}
	return recs, next, nil
}

// Counts returns how many processes are in each state, in one round trip.
func (s *Store) Counts(ctx context.Context) (map[lifecycle.State]int64, error) {
	states := lifecycle.States()
	cmds := make([]*redis.IntCmd, len(states))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, st := range states {
			cmds[i] = p.ZCard(ctx, stateKey(st))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: counts: %w", err)
	}
	counts := make(map[lifecycle.State]int64, len(states))
	for i, st := range states {
		counts[st] = cmds[i].Val()
	}
	return counts, nil
}
