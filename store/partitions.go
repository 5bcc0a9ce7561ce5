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

// each calls f(0) to f(n-1) at once and returns the first error. Script
// calls made from f share round trips through the batcher, one per Redis
// (per master of a Cluster): walking the partitions costs about what one
// call does.
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
// of them on one Redis; on a Cluster, those of one hash tag (a partition's
// keys, in one slot), in the order their tags first come.
func (s *Store) bySlot(keys []string) [][]string {
	if !s.cluster {
		return [][]string{keys}
	}
	var groups [][]string
	at := map[string]int{}
	for _, k := range keys {
		tag, _, _ := strings.Cut(k, "}")
		i, ok := at[tag]
		if !ok {
			i = len(groups)
			at[tag] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], k)
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
