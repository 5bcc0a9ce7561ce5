package store

import (
	"context"
	"errors"
	"fmt"
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
		exists = p.Exists(ctx, procKey(pid))
		if limit == 0 {
			entries = p.XRange(ctx, eventsKey(pid), start, "+")
		} else {
			entries = p.XRangeN(ctx, eventsKey(pid), start, "+", int64(limit))
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
	streams, err := s.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{eventsKey(pid), after}, Block: block}).Result()
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
