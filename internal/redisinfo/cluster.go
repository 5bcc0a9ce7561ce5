package redisinfo

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ClusterEnabled reads INFO cluster: whether the server runs in Redis
// Cluster mode. brain cannot run on one: a turn's commit updates the
// process's keys and the shared wake queue and state indexes in one
// script, and Cluster runs a script only on keys of one slot.
func ClusterEnabled(ctx context.Context, rdb *redis.Client) (bool, error) {
	txt, err := rdb.Info(ctx, "cluster").Result()
	if err != nil {
		return false, fmt.Errorf("INFO cluster: %w", err)
	}
	switch v := Field(txt, "cluster_enabled"); v {
	case "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("INFO cluster: cluster_enabled is %q, want 0 or 1", v)
	}
}
