package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
)

// Log returns events of the conversation log of process pid, oldest first,
// each with its stream entry id as ID: those after the event with id after
// ("" = from the start), at most limit of them (0 = all).
func (s *Store) Log(ctx context.Context, pid string, after string, limit int) ([]conversation.Event, error) {
	if !validID(pid) {
		return nil, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	if limit < 0 {
		return nil, fmt.Errorf("store: log of %s: limit must not be negative (got %d)", pid, limit)
	}
	start := "-"
	if after != "" {
		start = "(" + after
	}
	var exists *redis.IntCmd
	var entries *redis.XMessageSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, s.keys.proc(pid))
		if limit == 0 {
			entries = p.XRange(ctx, s.keys.events(pid), start, "+")
		} else {
			entries = p.XRangeN(ctx, s.keys.events(pid), start, "+", int64(limit))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: log of %s: %w", pid, err)
	}
	if exists.Val() == 0 {
		return nil, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	events := make([]conversation.Event, 0, len(entries.Val()))
	for _, e := range entries.Val() {
		ev, err := s.decodeEvent(e.ID, field(e.Values, "e"))
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
	return events, nil
}

// Follow waits up to block for events of process pid after the event with
// id after ("" = from the start; "$" = only new ones) and returns them, or
// none when nothing arrived in time. A blocked read is not interrupted by
// ctx in go-redis: callers loop with a short block and check ctx.
func (s *Store) Follow(ctx context.Context, pid string, after string, block time.Duration) ([]conversation.Event, error) {
	if !validID(pid) {
		return nil, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	if block <= 0 {
		return nil, fmt.Errorf("store: follow %s: block must be positive (got %s)", pid, block)
	}
	if after == "" {
		after = "0"
	}
	streams, err := s.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{s.keys.events(pid), after}, Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: follow %s: %w", pid, err)
	}
	var events []conversation.Event
	for _, st := range streams {
		for _, e := range st.Messages {
			ev, err := s.decodeEvent(e.ID, field(e.Values, "e"))
			if err != nil {
				return nil, err
			}
			events = append(events, ev)
		}
	}
	return events, nil
}

// logBetween reads the entries of pid's log after the one with id after
// and before the one with id before.
func (s *Store) logBetween(ctx context.Context, pid, after, before string) ([]logEntry, error) {
	reply, err := s.rdb.Do(ctx, "xrange", s.keys.events(pid), "("+after, "("+before).Slice()
	if err != nil {
		return nil, fmt.Errorf("read the log: %w", err)
	}
	return logEntries(reply), nil
}

// logPageBefore reads, in log order, the n entries of pid's log that come
// right before the one with id before, and whether there may be more
// before them.
func (s *Store) logPageBefore(ctx context.Context, pid, before string, n int) ([]logEntry, bool, error) {
	end := "+" // the log's end
	if before != "" {
		end = "(" + before
	}
	reply, err := s.rdb.Do(ctx, "xrevrange", s.keys.events(pid), end, "-", "COUNT", n).Slice()
	if err != nil {
		return nil, false, fmt.Errorf("read the log: %w", err)
	}
	entries := logEntries(reply)
	slices.Reverse(entries)
	return entries, len(entries) == n, nil
}

// LogBefore returns, oldest first, the at most n events of pid's log that
// come right before the event with id before (its newest events when
// before is empty), and whether there may be more before them: it reads a
// log back from a claim's History when HistoryOmitted.
func (s *Store) LogBefore(ctx context.Context, pid, before string, n int) ([]conversation.Event, bool, error) {
	if !validID(pid) {
		return nil, false, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	if n < 1 {
		return nil, false, fmt.Errorf("store: log of %s before %s: want at least 1 event (got %d)", pid, before, n)
	}
	entries, more, err := s.logPageBefore(ctx, pid, before, n)
	if err != nil {
		return nil, false, fmt.Errorf("store: log of %s before %s: %w", pid, before, err)
	}
	events := make([]conversation.Event, 0, len(entries))
	for _, e := range entries {
		ev, err := s.decodeEvent(e.id, e.data)
		if err != nil {
			return nil, false, fmt.Errorf("store: log of %s: %w", pid, err)
		}
		events = append(events, ev)
	}
	return events, more, nil
}

// A logEntry is an entry of a log as XRANGE returns it: its id and its
// event's JSON.
type logEntry struct{ id, data string }

// logEntries reads an XRANGE reply of a log taken as a plain slice, which
// costs less than go-redis's XMessage (a map per entry).
func logEntries(reply []any) []logEntry {
	out := make([]logEntry, 0, len(reply))
	for _, r := range reply {
		entry, _ := r.([]any)
		if len(entry) < 2 {
			continue
		}
		e := logEntry{id: str(entry[0])}
		fields := strs(entry[1])
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "e" {
				e.data = fields[i+1]
			}
		}
		out = append(out, e)
	}
	return out
}
