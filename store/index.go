package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Markers of a database whose processes are all in the owner and workers
// indexes. indexedKey replaces ownersIndexedKey, which a brain with owner
// indexes but no workers indexes set; IndexProcesses removes it.
const (
	indexedKey       = keyPrefix + "indexed"
	ownersIndexedKey = keyPrefix + "owner-index"
)

// Indexed counts what IndexProcesses added to the indexes.
type Indexed struct {
	// Owners counts processes added to their owner's index.
	Owners int
	// Workers counts workers added to their parent's index.
	Workers int
}

// IndexProcesses adds every process with an owner to its owner's index and
// every worker to its parent's, once per database: processes created by a
// brain without those indexes would otherwise be missing from ListOwned,
// and their workers left behind by Delete. It walks the keys with SCAN, a
// page at a time, is safe to run from several nodes at once, and returns
// how many entries it added (those an index lacked).
func (s *Store) IndexProcesses(ctx context.Context) (Indexed, error) {
	var added Indexed
	done, err := s.rdb.Exists(ctx, indexedKey).Result()
	if err != nil || done == 1 {
		return added, err
	}
	var cursor uint64
	for {
		keys, next, err := s.rdb.Scan(ctx, cursor, keyPrefix+"{*}:proc", 1000).Result()
		if err != nil {
			return added, fmt.Errorf("store: index processes: %w", err)
		}
		n, err := s.indexPage(ctx, keys)
		added.Owners += n.Owners
		added.Workers += n.Workers
		if err != nil {
			return added, err
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	pipe := s.rdb.TxPipeline()
	pipe.Set(ctx, indexedKey, "1", 0)
	pipe.Del(ctx, ownersIndexedKey)
	if _, err := pipe.Exec(ctx); err != nil {
		return added, fmt.Errorf("store: index processes: %w", err)
	}
	return added, nil
}

// indexPage adds the processes of the proc keys to their owners' and
// parents' indexes, in three pipelines: their records, whether their
// parents still exist (a deleted parent gets no index), the additions.
func (s *Store) indexPage(ctx context.Context, keys []string) (Indexed, error) {
	var added Indexed
	if len(keys) == 0 {
		return added, nil
	}
	pipe := s.rdb.Pipeline()
	reads := make([]*redis.SliceCmd, len(keys))
	for i, k := range keys {
		reads[i] = pipe.HMGet(ctx, k, "owner", "created_at", "parent")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return added, fmt.Errorf("store: index processes: %w", err)
	}
	type entry struct {
		pid, owner, parent string
		at                 float64
		parentExists       *redis.IntCmd
	}
	entries := make([]entry, 0, len(keys))
	pipe = s.rdb.Pipeline()
	for i, k := range keys {
		owner, _ := reads[i].Val()[0].(string)
		created, _ := reads[i].Val()[1].(string)
		parent, _ := reads[i].Val()[2].(string)
		at, err := strconv.ParseFloat(created, 64)
		pid := k[len(keyPrefix)+1 : len(k)-len("}:proc")]
		if err != nil || !validID(pid) {
			continue
		}
		e := entry{pid: pid, owner: owner, parent: parent, at: at}
		if validID(parent) {
			e.parentExists = pipe.Exists(ctx, procKey(parent))
		}
		entries = append(entries, e)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return added, fmt.Errorf("store: index processes: %w", err)
	}
	pipe = s.rdb.Pipeline()
	var owners, workers []*redis.IntCmd
	for _, e := range entries {
		if e.owner != "" {
			owners = append(owners, pipe.ZAdd(ctx, ownerKey(e.owner), redis.Z{Score: e.at, Member: e.pid}))
		}
		if e.parentExists != nil && e.parentExists.Val() == 1 {
			workers = append(workers, pipe.ZAdd(ctx, workersKey(e.parent), redis.Z{Score: e.at, Member: e.pid}))
		}
	}
	if len(owners)+len(workers) == 0 {
		return added, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return added, fmt.Errorf("store: index processes: %w", err)
	}
	// Count those the indexes lacked; the others were created indexed.
	for _, a := range owners {
		added.Owners += int(a.Val())
	}
	for _, a := range workers {
		added.Workers += int(a.Val())
	}
	return added, nil
}
