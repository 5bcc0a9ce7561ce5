package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
// 0, at most 1000), from every partition. after is the cursor a previous
// call returned ("" = from the start); the returned cursor is "" on the
// last page. Records that change state between pages may be missed or
// repeated, as with any index walked live; a process created meanwhile is
// listed once if it sorts after the cursor, never twice.
func (s *Store) List(ctx context.Context, state lifecycle.State, after string, limit int) ([]Record, string, error) {
	states := lifecycle.States()
	if state != "" {
		st, err := lifecycle.ParseState(string(state))
		if err != nil {
			return nil, "", fmt.Errorf("store: list: %w", err)
		}
		states = []lifecycle.State{st}
	}
	keys := make([]string, 0, len(states)*len(s.keys.bases))
	for n := range s.keys.bases {
		for _, st := range states {
			keys = append(keys, s.keys.state(n, st))
		}
	}
	return s.list(ctx, keys, nil, after, limit)
}

// ListOwned is List of the processes owner created, from their own index
// in each partition: the work is bounded by owner's processes, not
// everyone's. With a state, a page looks at a bounded number of owner's
// processes and may come back short with a cursor; follow it for the rest.
func (s *Store) ListOwned(ctx context.Context, owner string, state lifecycle.State, after string, limit int) ([]Record, string, error) {
	if owner == "" {
		return nil, "", fmt.Errorf("store: list: owner is empty")
	}
	keys := make([]string, len(s.keys.bases))
	for n := range keys {
		keys[n] = s.keys.owner(n, owner)
	}
	return s.listIndex(ctx, keys, state, after, limit)
}

// ListWorkers is List of the workers process parent started, from its
// workers index (as ListOwned, a page with a state may come back short).
func (s *Store) ListWorkers(ctx context.Context, parent string, state lifecycle.State, after string, limit int) ([]Record, string, error) {
	if !validID(parent) {
		return nil, "", fmt.Errorf("%w: process %q", ErrNotFound, parent)
	}
	return s.listIndex(ctx, []string{s.keys.workers(parent)}, state, after, limit)
}

// listIndex lists the processes of some indexes, keeping those in state
// ("": every state).
func (s *Store) listIndex(ctx context.Context, keys []string, state lifecycle.State, after string, limit int) ([]Record, string, error) {
	var keep map[lifecycle.State]bool
	if state != "" {
		st, err := lifecycle.ParseState(string(state))
		if err != nil {
			return nil, "", fmt.Errorf("store: list: %w", err)
		}
		keep = map[lifecycle.State]bool{st: true}
	}
	return s.list(ctx, keys, keep, after, limit)
}

// A listed is a member of an index: a process and its creation time.
type listed struct {
	pid   string
	score int64
}

func (a listed) compare(b listed) int {
	return cmp.Or(cmp.Compare(a.score, b.score), strings.Compare(a.pid, b.pid))
}

// list merges the index keys (sorted sets of pids by creation time, in any
// partitions), keeping the records in the states of keep (nil: all). Each
// index gives its first window members after the cursor, in one round trip
// for all; the first window of their union are then the first of the
// whole, whose records a second round trip reads. With states to keep, at
// most 4 × limit + 1 records are looked at: a page may be short and still
// have a next.
func (s *Store) list(ctx context.Context, keys []string, keep map[lifecycle.State]bool, after string, limit int) ([]Record, string, error) {
	switch {
	case limit <= 0:
		limit = defaultListLimit
	case limit > maxListLimit:
		limit = maxListLimit
	}
	var cursor listed
	if after != "" {
		ms, pid, ok := strings.Cut(after, ":")
		score, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil || !validID(pid) {
			return nil, "", fmt.Errorf("store: list: cursor %q is not one List returned", after)
		}
		cursor = listed{pid: pid, score: score}
	}
	window := limit + 1
	if keep != nil {
		window = 4*limit + 1
	}
	same := make([]*redis.ZSliceCmd, len(keys))
	later := make([]*redis.ZSliceCmd, len(keys))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range keys {
			from := "-inf"
			if after != "" {
				at := strconv.FormatInt(cursor.score, 10)
				same[i] = p.ZRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{Min: at, Max: at})
				from = "(" + at
			}
			later[i] = p.ZRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{Min: from, Max: "+inf", Count: int64(window)})
		}
		return nil
	}); err != nil {
		return nil, "", fmt.Errorf("store: list: %w", err)
	}
	var cands []listed
	full := false // an index has more than its window holds
	for i := range keys {
		var members []redis.Z
		if same[i] != nil {
			for _, z := range same[i].Val() {
				if m, _ := z.Member.(string); m > cursor.pid {
					members = append(members, z)
				}
			}
		}
		members = append(members, later[i].Val()...)
		if len(members) >= window {
			full = true
		}
		for _, z := range members {
			m, _ := z.Member.(string)
			cands = append(cands, listed{pid: m, score: int64(z.Score)})
		}
	}
	slices.SortFunc(cands, listed.compare)
	cands = cands[:min(len(cands), window)]
	recs, err := s.records(ctx, cands)
	if err != nil {
		return nil, "", err
	}
	out := make([]Record, 0, limit)
	last := -1
	for i, r := range recs {
		if len(out) == limit {
			break
		}
		last = i
		if r != nil && (keep == nil || keep[r.Status.State]) {
			out = append(out, *r)
		}
	}
	var next string
	if last >= 0 && (last < len(cands)-1 || full) {
		next = strconv.FormatInt(cands[last].score, 10) + ":" + cands[last].pid
	}
	return out, next, nil
}

// records reads the records of cands with their inbox lengths, in one
// round trip; a process deleted since it was listed is nil.
func (s *Store) records(ctx context.Context, cands []listed) ([]*Record, error) {
	fields := make([]*redis.MapStringStringCmd, len(cands))
	inboxes := make([]*redis.IntCmd, len(cands))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range cands {
			fields[i] = p.HGetAll(ctx, s.keys.proc(c.pid))
			inboxes[i] = p.XLen(ctx, s.keys.inbox(c.pid))
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	recs := make([]*Record, len(cands))
	for i, c := range cands {
		h := fields[i].Val()
		if len(h) == 0 {
			continue
		}
		r, err := parseRecord(c.pid, h)
		if err != nil {
			return nil, err
		}
		r.Inbox = int(inboxes[i].Val())
		recs[i] = &r
	}
	return recs, nil
}

// Counts returns how many processes are in each state, in one round trip.
func (s *Store) Counts(ctx context.Context) (map[lifecycle.State]int64, error) {
	states := lifecycle.States()
	cmds := make([][]*redis.IntCmd, len(states))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, st := range states {
			for n := range s.keys.bases {
				cmds[i] = append(cmds[i], p.ZCard(ctx, s.keys.state(n, st)))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: counts: %w", err)
	}
	counts := make(map[lifecycle.State]int64, len(states))
	for i, st := range states {
		for _, c := range cmds[i] {
			counts[st] += c.Val()
		}
	}
	return counts, nil
}
