// Package testutil holds helpers shared by the tests of several packages.
package testutil

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/internal/redisdial"
	"github.com/engine-brain/brain/internal/redisserver"
)

// RequireRedisEnv names the environment variable that turns a missing
// redis-server binary from a skip into a failure. CI sets it to 1.
const RequireRedisEnv = "BRAIN_REQUIRE_REDIS"

// RedisServer is a real redis-server on a free loopback port, owned by one
// test and stopped when it ends.
type RedisServer struct {
	Addr string
	srv  *redisserver.Server
}

// Redis starts a fresh redis-server for this test and returns a client for
// it. Each test gets its own server, so parallel tests never see each
// other's keys. When the binary is missing the test is skipped loudly, or
// fails when BRAIN_REQUIRE_REDIS=1.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	return StartRedis(t).Client(t)
}

// StartRedis starts a redis-server for this test; see Redis.
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	return StartRedisWith(t, redisserver.Options{})
}

// StartRedisWith starts a redis-server for this test with opts; see Redis.
func StartRedisWith(t testing.TB, opts redisserver.Options) *RedisServer {
	t.Helper()
	return start(t, func() (*redisserver.Server, error) { return redisserver.Start(opts) })
}

// StartReplica starts a redis-server for this test as a replica of
// master, and returns once it is in sync: it has acknowledged a write.
func StartReplica(t testing.TB, master *RedisServer) *RedisServer {
	t.Helper()
	replica := StartRedisWith(t, redisserver.Options{ReplicaOf: master.Addr})
	ctx := context.Background()
	rdb := master.Client(t)
	if err := rdb.Set(ctx, "testutil:sync", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("testutil: the replica is not in sync: %d, %v", n, err)
	}
	return replica
}

// start starts a server for this test with run; see Redis.
func start(t testing.TB, run func() (*redisserver.Server, error)) *RedisServer {
	t.Helper()
	srv, err := run()
	started(t, err)
	t.Cleanup(srv.Close)
	return &RedisServer{Addr: srv.Addr, srv: srv}
}

// started ends the test when err says that its Redis did not start:
// skipped loudly when there is no redis-server binary (a failure under
// BRAIN_REQUIRE_REDIS=1), failed for any other reason.
func started(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, redisserver.ErrNoBinary) {
		if os.Getenv(RequireRedisEnv) == "1" {
			t.Fatalf("testutil: %v (%s=1 makes this a failure; install it with `apt-get install -y redis-server`)", err, RequireRedisEnv)
		}
		t.Skipf("SKIPPED: this test needs a real redis-server: %v. Install it with `apt-get install -y redis-server` (`make test` does this when it can).", err)
	}
	if err != nil {
		t.Fatalf("testutil: %v", err)
	}
}

// RedisCluster starts a Redis Cluster of real redis-servers for this test,
// masters of them each with replicas of its own, formed and in sync (see
// redisserver.StartCluster), and returns it with a cluster client seeded
// with every node, made as brain makes its own (redisdial.NewClusterClient:
// it follows a failover as soon as a replica takes over); both are closed when the test ends. Skipped or failed
// as Redis is when there is no redis-server binary.
func RedisCluster(t testing.TB, masters, replicas int) (*redisserver.Cluster, *redis.ClusterClient) {
	t.Helper()
	c, err := redisserver.StartCluster(redisserver.ClusterOptions{Masters: masters, ReplicasPerMaster: replicas})
	started(t, err)
	t.Cleanup(c.Close)
	cc := redisdial.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { _ = cc.Close() })
	return c, cc
}

// ClusterUser makes a Redis user of the ACL rules given (say "+@all",
// "-client") on every master of c, and returns a cluster client that logs
// in as it, closed when the test ends.
func ClusterUser(t testing.TB, c *redisserver.Cluster, rules ...string) *redis.ClusterClient {
	t.Helper()
	args := []any{"ACL", "SETUSER", "limited", "on", ">secret", "~*", "&*"}
	for _, r := range rules {
		args = append(args, r)
	}
	for _, m := range c.Masters {
		admin := redis.NewClient(&redis.Options{Addr: m.Addr})
		err := admin.Do(t.Context(), args...).Err()
		_ = admin.Close()
		if err != nil {
			t.Fatalf("ACL SETUSER on %s: %v", m.Addr, err)
		}
	}
	cc := redisdial.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), Username: "limited", Password: "secret"})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// StartSentinel starts a Redis Sentinel for this test that monitors the
// server at master as redisserver.SentinelMaster; see Redis.
func StartSentinel(t testing.TB, master string) *RedisServer {
	t.Helper()
	return start(t, func() (*redisserver.Server, error) { return redisserver.StartSentinel(master) })
}

// Shutdown stops the server (SIGTERM), which writes out what it keeps on
// disk; see redisserver.Server.Shutdown.
func (s *RedisServer) Shutdown(t testing.TB) {
	t.Helper()
	if err := s.srv.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

// Relaunch starts the server again at the same address, with what it kept
// on disk.
func (s *RedisServer) Relaunch(t testing.TB) {
	t.Helper()
	if err := s.srv.Relaunch(); err != nil {
		t.Fatal(err)
	}
}

// Client returns a new client for the server, closed when the test ends.
func (s *RedisServer) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Replay runs on rdb the Redis commands of a JSON lines file, one array of
// strings a line (store/testdata/legacy-layout.jsonl: the keys a brain of
// an older layout left). A consumer group is created with MKSTREAM, so
// that a group over an empty stream comes back too.
func Replay(t testing.TB, rdb redis.UniversalClient, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var cmd []string
		if err := json.Unmarshal([]byte(line), &cmd); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		args := make([]any, 0, len(cmd)+1)
		for _, a := range cmd {
			args = append(args, a)
		}
		if len(cmd) > 1 && cmd[0] == "XGROUP" {
			args = append(args, "MKSTREAM")
		}
		if err := rdb.Do(context.Background(), args...).Err(); err != nil {
			t.Fatalf("%s:%d: %v: %v", path, i+1, cmd, err)
		}
	}
}
