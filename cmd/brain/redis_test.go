package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/internal/testutil"
)

// TestWarnOfEviction checks that serve warns, naming the fix, when its
// Redis may evict keys, and says nothing when it may not.
func TestWarnOfEviction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testutil.Redis(t)
	warnings := func() []string {
		t.Helper()
		core, logs := observer.New(zap.WarnLevel)
		warnOfEviction(ctx, rdb, zap.New(core))
		var msgs []string
		for _, e := range logs.All() {
			msgs = append(msgs, e.Message+" "+e.ContextMap()["eviction"].(string))
		}
		return msgs
	}
	if got := warnings(); len(got) != 0 {
		t.Errorf("noeviction: warned %q", got)
	}
	for _, kv := range [][2]string{{"maxmemory", "1073741824"}, {"maxmemory-policy", "allkeys-lru"}} {
		if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	got := warnings()
	if len(got) != 1 || !strings.Contains(got[0], "maxmemory-policy noeviction") ||
		!strings.Contains(got[0], "maxmemory-policy allkeys-lru, maxmemory 1073741824 bytes") {
		t.Errorf("allkeys-lru: warned %q, want one warning naming the policy and the fix", got)
	}
}

// brain serve refuses a Redis in cluster mode, saying why and what to use
// instead, rather than failing on the first script that spans two slots.
func TestServeRefusesRedisCluster(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "cluster.conf")
	if err := os.WriteFile(conf, []byte("cluster-enabled yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testutil.StartRedisWith(t, redisserver.Options{ConfigFile: conf})
	_, release, err := openRedis(context.Background(), "redis://"+srv.Addr, zap.NewNop())
	if err == nil {
		release()
		t.Fatal("openRedis of a cluster-mode server: no error")
	}
	if !strings.Contains(err.Error(), "runs in cluster mode, which brain does not support") || !strings.Contains(err.Error(), "Sentinel") {
		t.Errorf("openRedis of a cluster-mode server: %v; want why, and what to use instead", err)
	}
	if _, release, err := openRedis(context.Background(), "redis://"+testutil.StartRedis(t).Addr, zap.NewNop()); err != nil {
		t.Errorf("openRedis of a standalone server: %v", err)
	} else {
		release()
	}
}
