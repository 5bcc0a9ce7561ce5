package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// eachPartition calls f for every partition at once and returns the first
// error. Script calls made from f share round trips through the batcher,
// one per Redis (per master of a Cluster): walking the partitions costs
// about what one call does.
func (s *Store) eachPartition(ctx context.Context, f func(ctx context.Context, n int) error) error {
	return each(ctx, len(s.keys.bases), func(ctx context.Context, i int) error { return f(ctx, i) })
}

// eachStream is eachPartition over some streams.
func (s *Store) eachStream(ctx context.Context, streams []string, f func(ctx context.Context, stream string) error) error {
	return each(ctx, len(streams), func(ctx context.Context, i int) error { return f(ctx, streams[i]) })
}

// each calls f(0) to f(n-1) at once and returns the first error.
func each(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for i := range n {
		wg.Go(func() {
			if err := f(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// bySlot splits keys into groups a single command may take together: all
// of them on one Redis, one slot's on a Cluster (where each partition is a
// slot of its own).
func (s *Store) bySlot(keys []string) [][]string {
	if !s.cluster {
		return [][]string{keys}
	}
	groups := make([][]string, len(keys))
	for i, k := range keys {
		groups[i] = []string{k}
	}
	return groups
}

// ErrLayout: the deployment's Redis holds keys in a layout this store
// does not read (another number of partitions, or the layout of a brain
// from before partitions). Nothing was changed.
var ErrLayout = errors.New("store: the Redis holds another key layout")

// The keys of the layout before partitions that CheckLayout looks for: a
// Redis used by an older brain has some of them.
var oldLayoutKeys = []string{
	keyPrefix + "timers", keyPrefix + "approvals", keyPrefix + "indexed", keyPrefix + "owner-index",
	keyPrefix + "state:READY", keyPrefix + "state:RUNNING", keyPrefix + "state:BLOCKED",
	keyPrefix + "state:PAUSED", keyPrefix + "state:DONE", keyPrefix + "state:FAILED",
}

// CheckLayout makes sure the Redis holds this store's key layout: it
// records the number of partitions the first time (a deployment's number
// is set once), and refuses, with ErrLayout, a Redis whose deployment has
// another number, or that holds the data of a brain from before partitions
// (which `brain migrate` moves).
func (s *Store) CheckLayout(ctx context.Context) error {
	want := layoutValue(len(s.keys.bases))
	got, err := s.rdb.Get(ctx, layoutKey).Result()
	if errors.Is(err, redis.Nil) {
		old := make([]*redis.IntCmd, len(oldLayoutKeys))
		if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range oldLayoutKeys {
				old[i] = p.Exists(ctx, k) // one key each: they are in different slots
			}
			return nil
		}); err != nil {
			return fmt.Errorf("store: check layout: %w", err)
		}
		for i, c := range old {
			if c.Val() > 0 {
				return fmt.Errorf("%w: it holds %s, the data of a brain from before partitions; stop every node and run "+
					"`brain migrate` with the same --redis to move it into %d partitions, then start again", ErrLayout, oldLayoutKeys[i], len(s.keys.bases))
			}
		}
		if err := s.rdb.SetNX(ctx, layoutKey, want, 0).Err(); err != nil {
			return fmt.Errorf("store: check layout: %w", err)
		}
		got, err = s.rdb.Get(ctx, layoutKey).Result() // another node's, if it was first
	}
	if err != nil {
		return fmt.Errorf("store: check layout: %w", err)
	}
	if got != want {
		return fmt.Errorf("%w: its deployment has %s, this node is configured for %d partitions; start it with the "+
			"deployment's number (a deployment's partitions are set when it first runs)", ErrLayout, strings.ReplaceAll(got, "=", " "), len(s.keys.bases))
	}
	return nil
}

// layoutValue is what layoutKey holds for a deployment of n partitions.
func layoutValue(n int) string { return "partitions=" + strconv.Itoa(n) }
