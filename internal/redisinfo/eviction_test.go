package redisinfo_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/internal/testutil"
)

func TestReadEviction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := testutil.StartRedis(t)
	rdb := srv.Client(t)
	read := func(rdb *redis.Client) redisinfo.Eviction {
		t.Helper()
		e, err := redisinfo.ReadEviction(ctx, rdb)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if got, want := read(rdb), (redisinfo.Eviction{MaxMemory: 0, Policy: "noeviction"}); got != want || !got.Safe() {
		t.Errorf("test server: %+v (safe %v), want %+v, safe", got, got.Safe(), want)
	}
	for _, kv := range [][2]string{{"maxmemory", "104857600"}, {"maxmemory-policy", "volatile-lru"}} {
		if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Read as a managed service's user reads it, without CONFIG.
	if got, want := read(withoutConfig(t, srv)), (redisinfo.Eviction{MaxMemory: 100 << 20, Policy: "volatile-lru"}); got != want || got.Safe() {
		t.Errorf("after CONFIG SET: %+v (safe %v), want %+v, unsafe", got, got.Safe(), want)
	}
}

func TestEvictionString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e    redisinfo.Eviction
		want string
	}{
		{redisinfo.Eviction{Policy: "noeviction"}, "maxmemory-policy noeviction, no maxmemory"},
		{redisinfo.Eviction{MaxMemory: 1 << 30, Policy: "allkeys-lru"}, "maxmemory-policy allkeys-lru, maxmemory 1073741824 bytes"},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}
