package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// migrateScript moves one process into the partitioned layout.
var migrateScript = redis.NewScript(mustRead("lua/migrate.lua"))

// Migrated counts what Migrate did.
type Migrated struct {
	// Processes moved into their partitions.
	Processes int
	// Keys of the old layout's indexes and wake queues deleted.
	Deleted int
}

// ErrNodesRunning: Migrate refused because nodes may still use the
// Redis.
var ErrNodesRunning = errors.New("store: nodes are running")

// Migrate moves the data of a brain from before partitions into this
// store's layout: every process's keys into its partition (renamed, its
// record, log, inbox, idempotency keys, timers, workers and approvals as
// they were), the state, owner, approvals and timer indexes rebuilt per
// partition, a process that was on the wake queue, or whose turn its
// node's stop cut short, put on its partition's queue; then the old
// layout's indexes and queues are deleted and the layout recorded. It
// refuses, with ErrNodesRunning, while a node beats, holds a duty's lease
// or a turn's (stop them all, and let the leases of one that died run
// out). Each process moves in one step, so a migration stopped midway
// loses nothing and goes on where it stopped when run again; nodes refuse
// to start until it has finished. A Redis already in this layout has
// nothing to migrate. progress, when given, is called after each process.
func (s *Store) Migrate(ctx context.Context, progress func(pid string)) (Migrated, error) {
	var done Migrated
	if s.cluster {
		return done, errors.New("store: migrate: the layout before partitions was never on a Redis Cluster: migrate the one Redis it is on " +
			"(a migrated worker stays in its own partition, not its parent's, so migrated data with workers stays on one Redis)")
	}
	if err := s.nodesStopped(ctx); err != nil {
		return done, fmt.Errorf("store: migrate: %w", err)
	}
	got, err := s.rdb.Get(ctx, layoutKey).Result()
	switch {
	case err == nil && got != layoutValue(len(s.keys.bases)):
		return done, fmt.Errorf("store: migrate: %w: its deployment has %s, not %d", ErrLayout, strings.ReplaceAll(got, "=", " "), len(s.keys.bases))
	case err != nil && !errors.Is(err, redis.Nil):
		return done, fmt.Errorf("store: migrate: %w", err)
	}
	err = s.scan(ctx, keyPrefix+"{*}:proc", func(key string) error {
		pid := strings.TrimSuffix(strings.TrimPrefix(key, keyPrefix+"{"), "}:proc")
		if !validID(pid) {
			return nil
		}
		n, err := migrateScript.Run(ctx, s.rdb, nil, pid, s.keys.of(pid)).Int()
		if err != nil {
			return fmt.Errorf("process %s: %w", pid, err)
		}
		done.Processes += n
		if progress != nil && n > 0 {
			progress(pid)
		}
		return nil
	})
	if err != nil {
		return done, fmt.Errorf("store: migrate: %w", err)
	}
	// The old layout's indexes and queues, once every process has left
	// them.
	for _, pattern := range []string{keyPrefix + "state:*", keyPrefix + "owner:*", keyPrefix + "wake:*"} {
		err := s.scan(ctx, pattern, func(key string) error {
			n, err := s.rdb.Del(ctx, key).Result()
			done.Deleted += int(n)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("store: migrate: %w", err)
		}
	}
	for _, key := range []string{keyPrefix + "timers", keyPrefix + "approvals", keyPrefix + "indexed", keyPrefix + "owner-index"} {
		n, err := s.rdb.Del(ctx, key).Result()
		if err != nil {
			return done, fmt.Errorf("store: migrate: %w", err)
		}
		done.Deleted += int(n)
	}
	if err := s.rdb.Set(ctx, layoutKey, layoutValue(len(s.keys.bases)), 0).Err(); err != nil {
		return done, fmt.Errorf("store: migrate: %w", err)
	}
	return done, nil
}

// nodesStopped says which node may still use the Redis, if one may: one
// that beats as a wake reader, holds a duty's lease, or a turn's lease (of
// either layout).
func (s *Store) nodesStopped(ctx context.Context) error {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	var running []string
	err := s.scan(ctx, keyPrefix+"nodes:*", func(key string) error {
		nodes, err := s.rdb.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: "(" + now, Max: "+inf"}).Result()
		running = append(running, nodes...)
		return err
	})
	if err != nil {
		return err
	}
	if len(running) > 0 {
		return fmt.Errorf("%w: node %s reads wakes (it beat within its lease); stop every node first", ErrNodesRunning, running[0])
	}
	for _, pattern := range []string{keyPrefix + "lease:*", keyPrefix + "{*}:lease", keyPrefix + "{*}:lease:*"} {
		it := s.rdb.Scan(ctx, 0, pattern, 1000).Iterator()
		if it.Next(ctx) {
			held := it.Val()
			return fmt.Errorf("%w: %s is held (a node runs, or died less than a lease's time ago); stop every node, "+
				"wait for the lease to run out (10s by default) and try again", ErrNodesRunning, held)
		}
		if err := it.Err(); err != nil {
			return err
		}
	}
	return nil
}

// scan calls f with every key that matches pattern (SCAN: keys added or
// removed meanwhile may be seen or not).
func (s *Store) scan(ctx context.Context, pattern string, f func(key string) error) error {
	it := s.rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for it.Next(ctx) {
		if err := f(it.Val()); err != nil {
			return err
		}
	}
	return it.Err()
}
