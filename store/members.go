package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Wake affinity: each wake stream has a home node among the nodes that read
// it, which reads it at once; the others take what its home leaves waiting
// (busy, stopped, or not yet known to them). A process's wakes then keep
// reaching the node that ran its last turn and keeps its log: its claims
// need not read the turns another node ran since, and each node keeps the
// logs of its share of the processes. Who is home is a matter of speed,
// never of correctness: every node still reads every stream, and a wake
// goes to one node through the consumer group.

// membersKey is the zset of the nodes that read engine's wakes, each scored
// by when it stops counting (unix ms) unless it beats again.
func membersKey(engine string) string { return keyPrefix + "nodes:" + engine }

// Members are the nodes that read each engine's wakes, by engine, as a Beat
// saw them, sorted by name.
type Members map[string][]string

// Beat notes that node reads the wakes of engines for the next ttl, drops
// the nodes whose time ran out, and returns who reads each engine's wakes
// now, in one round trip. The times are the node's own clock: a skew
// between nodes only changes how long a stopped node stays home to its
// streams (the others take its wakes meanwhile, a little later).
func (s *Store) Beat(ctx context.Context, node string, engines []string, ttl time.Duration) (Members, error) {
	if node == "" {
		return nil, errors.New("store: beat: node is empty")
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("store: beat: ttl must be positive (got %s)", ttl)
	}
	if err := checkEngines(engines); err != nil {
		return nil, fmt.Errorf("store: beat: %w", err)
	}
	now := time.Now()
	until := float64(now.Add(ttl).UnixMilli())
	cutoff := "(" + strconv.FormatInt(now.UnixMilli(), 10)
	reads := make([]*redis.StringSliceCmd, len(engines))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, e := range engines {
			p.ZAdd(ctx, membersKey(e), redis.Z{Score: until, Member: node})
			p.ZRemRangeByScore(ctx, membersKey(e), "-inf", cutoff)
			reads[i] = p.ZRange(ctx, membersKey(e), 0, -1)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: beat: %w", err)
	}
	m := make(Members, len(engines))
	for i, e := range engines {
		m[e] = reads[i].Val()
		slices.Sort(m[e]) // by name: the zset lists them by when their beats run out
	}
	return m, nil
}

// Leave removes node from the readers of engines' wakes: its streams get
// another home at once, not when its last beat runs out.
func (s *Store) Leave(ctx context.Context, node string, engines []string) error {
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range engines {
			p.ZRem(ctx, membersKey(e), node)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: leave: %w", err)
	}
	return nil
}

// HomeStreams splits the wake streams of engines into those node is home
// to under m and the others. Each stream has one home among its engine's
// members, node included whether m lists it or not, and every member is
// home to an even share (the counts differ by one at most), so that no
// node is left taking only what waits while another runs most turns. Nodes
// with the same view agree; a node that joins or leaves moves mostly the
// streams it takes or held (see homes).
func (s *Store) HomeStreams(node string, engines []string, m Members) (home, away []string, err error) {
	if err := checkEngines(engines); err != nil {
		return nil, nil, fmt.Errorf("store: home streams: %w", err)
	}
	for _, e := range engines {
		streams := make([]string, len(s.keys.bases))
		for n := range streams {
			streams[n] = s.keys.wake(n, e)
		}
		for i, h := range homes(streams, node, m[e]) {
			if h == node {
				home = append(home, streams[i])
			} else {
				away = append(away, streams[i])
			}
		}
	}
	return home, away, nil
}

// homes returns the home of each of streams among node and members. Each
// stream, in order, goes to the member that scores highest for it
// (rendezvous hashing; the smaller name on a tie) among those not yet home
// to their share: streams / members, one more for the first members to
// reach that (plain rendezvous hashing over an engine's few streams often
// gives one node three of four, or all). A stream moves when a member
// joins or leaves only if it goes to or came from that member, or if a
// share that changed size pushes it on.
func homes(streams []string, node string, members []string) []string {
	nodes := append([]string{node}, members...)
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	share, extra := len(streams)/len(nodes), len(streams)%len(nodes)
	load := make(map[string]int, len(nodes))
	out := make([]string, len(streams))
	for i, st := range streams {
		best, bestScore := "", uint64(0)
		for _, n := range nodes { // sorted: on a tie the smaller name stays best
			full := load[n] > share || load[n] == share && extra == 0
			if sc := homeScore(st, n); !full && (best == "" || sc > bestScore) {
				best, bestScore = n, sc
			}
		}
		out[i] = best
		if load[best]++; load[best] > share {
			extra-- // best took one of the shares with one more
		}
	}
	return out
}

// homeScore is node's rendezvous score for stream.
func homeScore(stream, node string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(stream))
	h.Write([]byte{0})
	h.Write([]byte(node))
	return h.Sum64()
}

// ReadWakesFrom is ReadWakes over some wake streams (the home ones of
// HomeStreams), for consumer node.
func (s *Store) ReadWakesFrom(ctx context.Context, node string, streams []string, count int, block time.Duration) ([]Wake, error) {
	if err := checkWakeStreams(streams); err != nil {
		return nil, fmt.Errorf("store: read wakes: %w", err)
	}
	if block <= 0 {
		return nil, fmt.Errorf("store: read wakes: block must be positive (got %s)", block)
	}
	return s.readWakes(ctx, node, streams, count, block)
}

// StealWakes takes for consumer node, from some wake streams (the away
// ones of HomeStreams), the wakes that have waited there undelivered for
// at least minAge: their home node has not taken them. A younger wake
// stays for its home. count bounds the wakes taken in all.
func (s *Store) StealWakes(ctx context.Context, node string, streams []string, minAge time.Duration, count int) ([]Wake, error) {
	if err := checkWakeStreams(streams); err != nil {
		return nil, fmt.Errorf("store: steal wakes: %w", err)
	}
	if node == "" {
		return nil, errors.New("store: steal wakes: node is empty")
	}
	if err := s.ensureGroups(ctx, streams); err != nil {
		return nil, fmt.Errorf("store: steal wakes: %w", err)
	}
	// One script over the streams; on a Cluster one per partition, all at
	// once, each taking its share of count (rounded up).
	groups := s.bySlot(streams)
	share := (max(count, 1) + len(groups) - 1) / len(groups)
	var (
		mu    sync.Mutex
		wakes []Wake
	)
	err := each(ctx, len(groups), func(ctx context.Context, i int) error {
		flat, err := s.scripts.steal.Run(ctx, s.batch, groups[i], node, max(minAge.Milliseconds(), 0), share).StringSlice()
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i+2 < len(flat); i += 3 {
			wakes = append(wakes, Wake{Stream: flat[i], EntryID: flat[i+1], PID: flat[i+2]})
		}
		return err
	})
	if err != nil {
		return wakes, fmt.Errorf("store: steal wakes: %w", err)
	}
	return wakes, nil
}

// checkWakeStreams says what is wrong with streams as wake streams to read.
func checkWakeStreams(streams []string) error {
	if len(streams) == 0 {
		return errors.New("no streams given")
	}
	if i := slices.IndexFunc(streams, func(st string) bool { return !isWakeStream(st) }); i >= 0 {
		return fmt.Errorf("%q is not a wake stream", streams[i])
	}
	return nil
}
