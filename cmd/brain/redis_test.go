package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// brain serve refuses a server in cluster mode reached through a
// redis:// URL, saying to name it with redis+cluster://, rather than fail
// on the first key kept by another master.
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
	if !strings.Contains(err.Error(), "runs in cluster mode") || !strings.Contains(err.Error(), "--redis redis+cluster://HOST:PORT") {
		t.Errorf("openRedis of a cluster-mode server: %v; want why, and what to use instead", err)
	}
	standalone := testutil.StartRedis(t).Addr
	if _, release, err := openRedis(context.Background(), "redis://"+standalone, zap.NewNop()); err != nil {
		t.Errorf("openRedis of a standalone server: %v", err)
	} else {
		release()
	}
	// And a redis+cluster:// URL of a server that is not in a cluster.
	_, release, err = openRedis(context.Background(), "redis+cluster://"+standalone, zap.NewNop())
	if err == nil {
		release()
		t.Fatal("openRedis of redis+cluster:// on a standalone server: no error")
	}
	if !strings.Contains(err.Error(), "not in cluster mode") || !strings.Contains(err.Error(), "redis://HOST:PORT") {
		t.Errorf("openRedis of redis+cluster:// on a standalone server: %v; want why, and what to use instead", err)
	}
}

// TestOpenRedisCluster reaches a Redis Cluster through a redis+cluster://
// URL, seeded with two of its masters: openRedis gives a client of the
// whole cluster; the warnings about what Redis keeps look at every master,
// each named.
func TestOpenRedisCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, cc := testutil.RedisCluster(t, 3, 0)

	rdb, release, err := openRedis(ctx, "redis+cluster://"+strings.Join(c.Addrs()[:2], ","), zap.NewNop())
	if err != nil {
		t.Fatalf("openRedis of a cluster: %v", err)
	}
	var seen atomic.Int64
	if err := rdb.(*redis.ClusterClient).ForEachMaster(ctx, func(context.Context, *redis.Client) error { seen.Add(1); return nil }); err != nil || seen.Load() != 3 {
		t.Errorf("the client of the cluster sees %d masters (%v), want 3", seen.Load(), err)
	}
	release()

	// One master of three may evict keys, and keeps no append-only file.
	risky := c.Masters[1]
	direct := redis.NewClient(&redis.Options{Addr: risky.Addr})
	t.Cleanup(func() { _ = direct.Close() })
	if err := direct.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	for _, m := range []int{0, 2} {
		other := redis.NewClient(&redis.Options{Addr: c.Masters[m].Addr})
		t.Cleanup(func() { _ = other.Close() })
		if err := other.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
			t.Fatal(err)
		}
	}
	core, logs := observer.New(zap.InfoLevel)
	warnOfEviction(ctx, cc, zap.New(core))
	warnOfVolatility(ctx, cc, zap.New(core))
	masters := map[string][]string{}
	for _, e := range logs.All() {
		addr, _ := e.ContextMap()["master"].(string)
		masters[addr] = append(masters[addr], e.Level.String()+": "+e.Message)
	}
	if len(masters) != 3 {
		t.Errorf("logged of masters %v, want the 3 masters", masters)
	}
	for _, s := range c.Masters {
		var warned []string
		for _, m := range masters[s.Addr] {
			if strings.HasPrefix(m, "warn: ") {
				warned = append(warned, m)
			}
		}
		want := 0
		if s == risky {
			want = 2 // eviction and no append-only file
		}
		if len(warned) != want {
			t.Errorf("master %s: warned %q, want %d warnings", s.Addr, warned, want)
		}
	}
}

// TestParseClusterURL reads redis+cluster:// URLs into go-redis's cluster
// options, and refuses bad ones saying what and where, never repeating
// the password.
func TestParseClusterURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url       string
		addrs     []string
		user, pw  string
		tls       bool
		readTO    time.Duration
		wantError []string // in the error, when the URL is bad
	}{
		{url: "redis+cluster://10.0.0.1:7000", addrs: []string{"10.0.0.1:7000"}},
		{url: "redis+cluster://10.0.0.1:7000,10.0.0.2:7001,redis-3:7002/", addrs: []string{"10.0.0.1:7000", "10.0.0.2:7001", "redis-3:7002"}},
		{url: "redis+cluster://[::1]:7000,[::1]:7001/0", addrs: []string{"[::1]:7000", "[::1]:7001"}},
		{url: "rediss+cluster://app:s3cr%40t@node-1:6380,node-2:6380", addrs: []string{"node-1:6380", "node-2:6380"}, user: "app", pw: "s3cr@t", tls: true},
		{url: "redis+cluster://:pw@node-1:6379", addrs: []string{"node-1:6379"}, pw: "pw"},
		{url: "redis+cluster://node-1:6379,node-2:6379?read_timeout=2s", addrs: []string{"node-1:6379", "node-2:6379"}, readTO: 2 * time.Second},

		{url: "redis+cluster://", wantError: []string{"names no node", "redis+cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]"}},
		{url: "redis+cluster://u:hunter2@/", wantError: []string{"names no node"}},
		{url: "redis+cluster://node-1:6379,,node-2:6379", wantError: []string{"node 2 of 3", "is empty", "separated by commas"}},
		{url: "redis+cluster://u:hunter2@node-1", wantError: []string{`node 1 of 1 ("node-1")`, "is not HOST:PORT"}},
		{url: "redis+cluster://node-1:6379,node-2:http", wantError: []string{`node 2 of 2 ("node-2:http")`, "not a number from 1 to 65535"}},
		{url: "redis+cluster://node-1:6379,node-2:70000", wantError: []string{"not a number from 1 to 65535"}},
		{url: "redis+cluster://:6379", wantError: []string{"has no host"}},
		{url: "redis+cluster://node-1:6379/2", wantError: []string{`database "2"`, "only database 0"}},
		{url: "redis+cluster://u:hunter2@node-1:6379?master_name=x", wantError: []string{"unexpected option: master_name"}},
		{url: "redis+cluster://node-1:6379?read_timeout=soon", wantError: []string{"read_timeout"}},
		{url: "redis+cluster://node-1:6379#frag", wantError: []string{"fragment"}},
		{url: "unix+cluster://node-1:6379", wantError: []string{"scheme unix+cluster:// is not", "rediss+cluster://"}},
	} {
		target, err := parseRedisURL(tc.url)
		if tc.wantError != nil {
			if err == nil {
				t.Errorf("%s: no error", tc.url)
				continue
			}
			for _, want := range tc.wantError {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v; want %q in it", tc.url, err, want)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: the error shows the password: %v", tc.url, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		o := target.cluster
		if o == nil {
			t.Errorf("%s: not a cluster: %+v", tc.url, target)
			continue
		}
		if !slices.Equal(o.Addrs, tc.addrs) || o.Username != tc.user || o.Password != tc.pw ||
			(o.TLSConfig != nil) != tc.tls || o.ReadTimeout != tc.readTO {
			t.Errorf("%s: addrs %v, user %q, password %q, TLS %v, read timeout %s; want %v, %q, %q, %v, %s",
				tc.url, o.Addrs, o.Username, o.Password, o.TLSConfig != nil, o.ReadTimeout, tc.addrs, tc.user, tc.pw, tc.tls, tc.readTO)
		}
	}
	// The other forms are read as before.
	for _, u := range []string{"redis://node-1:6379/2", "rediss://node-1:6380", "redis://s:26379/0?master_name=m"} {
		if target, err := parseRedisURL(u); err != nil || target.cluster != nil {
			t.Errorf("%s: %+v, %v; want no cluster", u, target, err)
		}
	}
}
