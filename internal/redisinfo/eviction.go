package redisinfo

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Eviction is what a Redis server deletes on its own when its memory is
// full. brain keeps every process in Redis and cannot lose a key: any
// policy but noeviction may delete a process record, its log, a lease or a
// wake queue (the volatile-* policies pick among keys with a time to live,
// which leases and idempotency keys have). Under noeviction a full Redis
// refuses writes instead, which brain reports as errors and retries.
type Eviction struct {
	// MaxMemory is maxmemory in bytes; 0 means no limit (and no eviction
	// until one is set).
	MaxMemory int64
	// Policy is maxmemory-policy.
	Policy string
}

// ReadEviction reads INFO memory, which managed services that refuse
// CONFIG GET still answer.
func ReadEviction(ctx context.Context, rdb *redis.Client) (Eviction, error) {
	txt, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return Eviction{}, fmt.Errorf("INFO memory: %w", err)
	}
	policy := Field(txt, "maxmemory_policy")
	if policy == "" {
		return Eviction{}, fmt.Errorf("INFO memory: no maxmemory_policy field")
	}
	v := Field(txt, "maxmemory")
	max, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return Eviction{}, fmt.Errorf("INFO memory: maxmemory %q is not a number", v)
	}
	return Eviction{MaxMemory: max, Policy: policy}, nil
}

// Safe reports whether the server never deletes a key to free memory.
func (e Eviction) Safe() bool { return e.Policy == "noeviction" }

// String says it in a few words, for a log line.
func (e Eviction) String() string {
	if e.MaxMemory == 0 {
		return fmt.Sprintf("maxmemory-policy %s, no maxmemory", e.Policy)
	}
	return fmt.Sprintf("maxmemory-policy %s, maxmemory %d bytes", e.Policy, e.MaxMemory)
}
