package bench

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// roundTrips counts a client's round trips to Redis: one per command, one
// per pipeline (or transaction), however many commands it carries.
type roundTrips struct{ n atomic.Int64 }

var _ redis.Hook = (*roundTrips)(nil)

func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

func (c *roundTrips) load() int64 { return c.n.Load() }
