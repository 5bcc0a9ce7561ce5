package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// ownersIndexed marks a database whose processes are all in the owner
// indexes (processes created before the indexes existed are added by
// IndexOwners).
const ownersIndexed = keyPrefix + "owner-index"

// IndexOwners adds every process with an owner to its owner's index, once
// per database: processes created by a brain without owner indexes would
// otherwise be missing from ListOwned. It walks the keys with SCAN, a page
// at a time, is safe to run from several nodes at once, and returns how
// many processes it added (those an index lacked).
func (s *Store) IndexOwners(ctx context.Context) (int, error) {
	done, err := s.rdb.Exists(ctx, ownersIndexed).Result()
	if err != nil || done == 1 {
		return 0, err
	}
	added := 0
	var cursor uint64
	for {
		keys, next, err := s.rdb.Scan(ctx, cursor, keyPrefix+"{*}:proc", 1000).Result()
		if err != nil {
			return added, fmt.Errorf("store: index owners: %w", err)
		}
		n, err := s.indexOwners(ctx, keys)
		added += n
		if err != nil {
			return added, err
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if err := s.rdb.Set(ctx, ownersIndexed, "1", 0).Err(); err != nil {
		return added, fmt.Errorf("store: index owners: %w", err)
	}
	return added, nil
}

// indexOwners adds the processes of the proc keys to their owners'
// indexes, in two pipelines.
func (s *Store) indexOwners(ctx context.Context, keys []string) (int, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	pipe := s.rdb.Pipeline()
	reads := make([]*redis.SliceCmd, len(keys))
	for i, k := range keys {
		reads[i] = pipe.HMGet(ctx, k, "owner", "created_at")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("store: index owners: %w", err)
	}
	pipe = s.rdb.Pipeline()
	var adds []*redis.IntCmd
	for i, k := range keys {
		owner, _ := reads[i].Val()[0].(string)
		created, _ := reads[i].Val()[1].(string)
		at, err := strconv.ParseFloat(created, 64)
		pid := k[len(keyPrefix)+1 : len(k)-len("}:proc")]
		if owner == "" || err != nil || !validID(pid) {
			continue
		}
		adds = append(adds, pipe.ZAdd(ctx, ownerKey(owner), redis.Z{Score: at, Member: pid}))
	}
	if len(adds) == 0 {
		return 0, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("store: index owners: %w", err)
	}
	added := 0 // those the index lacked; the others were created indexed
	for _, a := range adds {
		added += int(a.Val())
	}
	return added, nil
}
