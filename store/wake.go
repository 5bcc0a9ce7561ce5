package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Wake is one entry of the wake queue: process PID should be looked at.
type Wake struct {
	Stream, EntryID, PID string
}

// wakeStreams returns the wake streams of engines, every partition's of
// each.
func (s *Store) wakeStreams(engines []string) ([]string, error) {
	if err := checkEngines(engines); err != nil {
		return nil, err
	}
	streams := make([]string, 0, len(engines)*len(s.keys.bases))
	for _, e := range engines {
		for n := range s.keys.bases {
			streams = append(streams, s.keys.wake(n, e))
		}
	}
	return streams, nil
}

// checkEngines says what is wrong with engines as a node's engines.
func checkEngines(engines []string) error {
	if len(engines) == 0 {
		return errors.New("no engines given")
	}
	for _, e := range engines {
		if !validID(e) {
			return fmt.Errorf("engine %q is not an engine name", e)
		}
	}
	return nil
}

// ensureGroups creates the consumer group of the streams that this Store
// has not seen yet (with MKSTREAM, from the start of the stream so that no
// wake enqueued before is lost), in one round trip. A group that exists is
// fine.
func (s *Store) ensureGroups(ctx context.Context, streams []string) error {
	s.mu.Lock()
	var missing []string
	for _, st := range streams {
		if !s.groups[st] {
			missing = append(missing, st)
		}
	}
	s.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, st := range missing {
			p.XGroupCreateMkStream(ctx, st, wakeGroup, "0")
		}
		return nil
	})
	if err != nil {
		for _, c := range cmds {
			if e := c.Err(); e != nil && !redis.HasErrorPrefix(e, "BUSYGROUP") {
				return fmt.Errorf("create consumer group: %w", e)
			}
		}
	}
	s.mu.Lock()
	for _, st := range missing {
		s.groups[st] = true
	}
	s.mu.Unlock()
	return nil
}

// forgetGroups makes the next ensureGroups create the groups again (after
// Redis lost them: a flush, a restart without persistence).
func (s *Store) forgetGroups(streams []string) {
	s.mu.Lock()
	for _, st := range streams {
		delete(s.groups, st)
	}
	s.mu.Unlock()
}

// ReadWakes reads new wakes of engines for consumer node, from every
// partition, waiting up to block for one (block must be positive: go-redis
// reads Block 0 as "forever"). count bounds the wakes read in all, give or
// take one per stream: each stream gives at most count / streams, rounded
// up, so a node takes about what it can run and leaves the rest to other
// nodes. No wake returns nil, nil.
//
// Cancelling ctx does not interrupt a blocked read (go-redis): keep block
// short and loop. A wake read is pending for node until AckWake, Commit,
// or a Claim that settles it; a node that dies leaves it pending for
// ClaimStaleWakes.
func (s *Store) ReadWakes(ctx context.Context, node string, engines []string, count int, block time.Duration) ([]Wake, error) {
	if block <= 0 {
		return nil, fmt.Errorf("store: read wakes: block must be positive (got %s)", block)
	}
	streams, err := s.wakeStreams(engines)
	if err != nil {
		return nil, fmt.Errorf("store: read wakes: %w", err)
	}
	return s.readWakes(ctx, node, streams, count, block)
}

// readWakes is ReadWakes over streams.
func (s *Store) readWakes(ctx context.Context, node string, streams []string, count int, block time.Duration) ([]Wake, error) {
	if node == "" {
		return nil, errors.New("store: read wakes: node is empty")
	}
	if s.cluster {
		return s.pollWakes(ctx, node, streams, max(count, 1), block)
	}
	perStream := (max(count, 1) + len(streams) - 1) / len(streams)
	args := make([]string, 0, 2*len(streams))
	args = append(args, streams...)
	for range streams {
		args = append(args, ">")
	}
	for attempt := 0; ; attempt++ {
		if err := s.ensureGroups(ctx, streams); err != nil {
			return nil, fmt.Errorf("store: read wakes: %w", err)
		}
		res, err := s.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: wakeGroup, Consumer: node, Streams: args, Count: int64(perStream), Block: block,
		}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return nil, nil
		case redis.HasErrorPrefix(err, "NOGROUP") && attempt == 0:
			s.forgetGroups(streams)
			continue
		case err != nil:
			return nil, fmt.Errorf("store: read wakes: %w", err)
		}
		var wakes []Wake
		for _, st := range res {
			for _, m := range st.Messages {
				wakes = append(wakes, Wake{Stream: st.Stream, EntryID: m.ID, PID: field(m.Values, "pid")})
			}
		}
		return wakes, nil
	}
}

// ClaimStaleWakes takes over, for node, wakes of engines that other
// consumers read but did not settle for at least minIdle (XAUTOCLAIM on
// every partition, in one round trip); count bounds the wakes taken per stream.
// With minIdle at least the lease TTL, these are wakes of dead or stalled
// nodes: Claim recovers their processes.
func (s *Store) ClaimStaleWakes(ctx context.Context, node string, engines []string, minIdle time.Duration, count int) ([]Wake, error) {
	if node == "" {
		return nil, errors.New("store: claim stale wakes: node is empty")
	}
	streams, err := s.wakeStreams(engines)
	if err != nil {
		return nil, fmt.Errorf("store: claim stale wakes: %w", err)
	}
	if err := s.ensureGroups(ctx, streams); err != nil {
		return nil, fmt.Errorf("store: claim stale wakes: %w", err)
	}
	cmds := make([]*redis.XAutoClaimCmd, len(streams))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, st := range streams {
			cmds[i] = p.XAutoClaim(ctx, &redis.XAutoClaimArgs{
				Stream: st, Group: wakeGroup, Consumer: node, MinIdle: minIdle, Start: "0-0", Count: int64(max(count, 0)),
			})
		}
		return nil
	})
	if err != nil {
		if redis.HasErrorPrefix(err, "NOGROUP") {
			s.forgetGroups(streams)
		}
		return nil, fmt.Errorf("store: claim stale wakes: %w", err)
	}
	var wakes []Wake
	for i, c := range cmds {
		msgs, _ := c.Val()
		for _, m := range msgs {
			wakes = append(wakes, Wake{Stream: streams[i], EntryID: m.ID, PID: field(m.Values, "pid")})
		}
	}
	return wakes, nil
}

// AckWake settles a wake that will not be claimed (TrimWakes deletes it
// later). Claim and Commit settle the wakes they handle themselves; never
// acknowledge a wake for which Claim returned ErrNothingToDo (it may be the
// pending wake a dead node's process is recovered through).
func (s *Store) AckWake(ctx context.Context, w Wake) error {
	if err := s.rdb.XAck(ctx, w.Stream, wakeGroup, w.EntryID).Err(); err != nil {
		return fmt.Errorf("store: ack wake %s %s: %w", w.Stream, w.EntryID, err)
	}
	return nil
}

// TrimWakes removes from the wake streams of engines the entries every
// node is done with: delivered and acknowledged. A claim or commit only
// acknowledges the wake it settles, because deleting an entry where it
// lies costs Redis a scan of the stream node that holds it (measured with
// callgrind: a tenth of a commit), while trimming a run of them does not.
// It keeps every entry not yet delivered and every pending one (a dead
// node's, which ClaimStaleWakes hands to another), judging each stream in
// one script (lua/trim_wakes.lua), all of them in one round trip.
func (s *Store) TrimWakes(ctx context.Context, engines []string) error {
	streams, err := s.wakeStreams(engines)
	if err != nil {
		return fmt.Errorf("store: trim wakes: %w", err)
	}
	err = each(ctx, len(streams), func(ctx context.Context, i int) error {
		return s.scripts.trimWakes.Run(ctx, s.batch, streams[i:i+1]).Err()
	})
	if err != nil {
		return fmt.Errorf("store: trim wakes: %w", err)
	}
	return nil
}

// WakeBell says why a Cluster's wake bell (bell.go) is down, say a Redis
// user not allowed CLIENT TRACKING: the node then polls its wake streams,
// 1 to 16 ms apart. It is nil while the bell is up, and on one Redis,
// where reads block instead.
func (s *Store) WakeBell() error { return s.bell.downBecause() }

// Polling a Cluster's wake streams: after a round of looks at every stream
// finds nothing, the next round waits pollFirst, each next one twice as
// long, up to pollMost; a look that finds a wake starts over. While the
// store's bell is up (bell.go), it says which streams changed, and a round
// only covers a lost ring, bellPoll apart.
const (
	pollFirst = time.Millisecond
	pollMost  = 16 * time.Millisecond
)

// pollWakes is readWakes on a Cluster, where one command cannot block on
// streams of several slots. It looks first at the streams the bell rang
// for, if it is up. A round of looks reads every stream, some at a time,
// without blocking, in one pipeline each that go-redis splits into one
// round trip per master, all at once: twice as many streams as wakes are
// wanted, taking turns round the streams (the store's poll cursor), so
// that a busy node reads about one stream per wake it runs. Between looks
// it waits for a ring, the next round (the store's backoff, kept from one
// call to the next, so that an idle node looks as far apart however often
// it calls), or the end of block.
func (s *Store) pollWakes(ctx context.Context, node string, streams []string, count int, block time.Duration) ([]Wake, error) {
	deadline := time.Now().Add(block)
	window, perStream := min(len(streams), 2*count), 1
	if count > len(streams) {
		perStream = (count + len(streams) - 1) / len(streams)
	}
	cc, _ := s.rdb.(*redis.ClusterClient)
	belled := cc != nil && s.bell.ready(ctx, cc)
	for {
		if belled {
			rung, all := s.bell.take(streams)
			if all {
				s.poll.next.Store(0)
			}
			if len(rung) > 0 {
				// The few streams that rang share all of count.
				per := (count + len(rung) - 1) / len(rung)
				wakes, err := s.pollStreams(ctx, node, rung, per)
				s.bell.again(wakes, per)
				if len(wakes) > 0 || err != nil {
					return wakes, err
				}
			}
		}
		if time.Now().UnixNano() >= s.poll.next.Load() {
			wakes, err := s.pollRound(ctx, node, streams, window, perStream)
			if len(wakes) > 0 || err != nil {
				s.poll.wait.Store(0)
				if belled {
					s.bell.again(wakes, perStream)
					s.poll.next.Store(time.Now().Add(bellPoll).UnixNano())
				}
				return wakes, err
			}
			wait := max(min(2*time.Duration(s.poll.wait.Load()), pollMost), pollFirst)
			if belled {
				wait = bellPoll // the bell says when to look; a round only covers a lost ring
			}
			s.poll.wait.Store(int64(wait))
			s.poll.next.Store(time.Now().Add(wait).UnixNano())
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		t := time.NewTimer(min(time.Until(time.Unix(0, s.poll.next.Load())), left))
		var rings <-chan struct{}
		if belled {
			rings = s.bell.rings
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-rings:
			t.Stop()
		case <-t.C:
		}
	}
}

// pollRound looks at every stream, window at a time from the poll cursor,
// until some give wakes.
func (s *Store) pollRound(ctx context.Context, node string, streams []string, window, perStream int) ([]Wake, error) {
	if err := s.ensureGroups(ctx, streams); err != nil {
		return nil, fmt.Errorf("store: read wakes: %w", err)
	}
	for looked := 0; looked < len(streams); looked += window {
		first := int(s.poll.cursor.Add(int64(window))-int64(window)) % len(streams)
		some := make([]string, 0, window)
		for i := range window {
			some = append(some, streams[(first+i)%len(streams)])
		}
		if wakes, err := s.pollStreams(ctx, node, some, perStream); len(wakes) > 0 || err != nil {
			return wakes, err
		}
	}
	return nil, nil
}

// pollStreams reads up to perStream new wakes of each of streams, for node,
// without blocking, in one pipeline.
func (s *Store) pollStreams(ctx context.Context, node string, streams []string, perStream int) ([]Wake, error) {
	reads := make([]*redis.XStreamSliceCmd, len(streams))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, st := range streams {
			reads[i] = p.XReadGroup(ctx, &redis.XReadGroupArgs{
				Group: wakeGroup, Consumer: node, Streams: []string{st, ">"}, Count: int64(perStream), Block: -1,
			})
		}
		return nil
	})
	var wakes []Wake
	var failed error
	for i, r := range reads {
		switch err := r.Err(); {
		case err == nil, errors.Is(err, redis.Nil):
		case redis.HasErrorPrefix(err, "NOGROUP"):
			s.forgetGroups(streams[i : i+1]) // created again at the next look
		default:
			failed = err
		}
		for _, st := range r.Val() {
			for _, m := range st.Messages {
				wakes = append(wakes, Wake{Stream: st.Stream, EntryID: m.ID, PID: field(m.Values, "pid")})
			}
		}
	}
	if failed == nil && err != nil && !errors.Is(err, redis.Nil) && !redis.HasErrorPrefix(err, "NOGROUP") {
		failed = err
	}
	if failed != nil {
		return wakes, fmt.Errorf("store: read wakes: %w", failed)
	}
	return wakes, nil
}
