package testutil

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/internal/redisserver"
)

// TestClusterForms checks that a cluster of three masters forms with the
// slots split as redis-cli splits them, every node agreeing; and that
// keys under hash tags of different masters' slots are kept by those
// masters, each its own.
func TestClusterForms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	begin := time.Now()
	c, cc := RedisCluster(t, 3, 0)
	t.Logf("a cluster of 3 masters formed in %s", time.Since(begin))

	if len(c.Addrs()) != 3 {
		t.Fatalf("seeds %v, want 3", c.Addrs())
	}
	for _, s := range c.Masters {
		direct := redis.NewClient(&redis.Options{Addr: s.Addr})
		t.Cleanup(func() { _ = direct.Close() })
		info, err := direct.ClusterInfo(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"cluster_state:ok", "cluster_slots_assigned:16384", "cluster_known_nodes:3", "cluster_size:3"} {
			if !strings.Contains(info, want) {
				t.Errorf("%s: CLUSTER INFO lacks %s:\n%s", s.Addr, want, info)
			}
		}
	}
	shards, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	ranges := map[string]string{}
	for _, r := range shards {
		ranges[r.Nodes[0].Addr] = fmt.Sprintf("%d-%d", r.Start, r.End)
	}
	for i, want := range []string{"0-5460", "5461-10921", "10922-16383"} { // as redis-cli --cluster create
		if got := ranges[c.Masters[i].Addr]; got != want {
			t.Errorf("master %d serves slots %s, want %s", i, got, want)
		}
	}

	// A tag of each master's slots, found by asking the cluster.
	tags := make([]string, len(c.Masters))
	for n := 0; tags[0] == "" || tags[1] == "" || tags[2] == ""; n++ {
		tag := fmt.Sprintf("p%d", n)
		slot, err := cc.ClusterKeySlot(ctx, "{"+tag+"}").Result()
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.Masters {
			if from, to := redisserver.SlotRange(i, 3); from <= int(slot) && int(slot) <= to && tags[i] == "" {
				tags[i] = tag
			}
		}
	}
	for i, tag := range tags {
		if err := cc.Set(ctx, "{"+tag+"}:k", tag, 0).Err(); err != nil {
			t.Fatal(err)
		}
		direct := redis.NewClient(&redis.Options{Addr: c.Masters[i].Addr, MaxRetries: -1})
		t.Cleanup(func() { _ = direct.Close() })
		if got, err := direct.Get(ctx, "{"+tag+"}:k").Result(); err != nil || got != tag {
			t.Errorf("master %d: GET {%s}:k = %q, %v; want %q", i, tag, got, err, tag)
		}
		if n, err := direct.DBSize(ctx).Result(); err != nil || n != 1 {
			t.Errorf("master %d keeps %d keys (%v), want its own one", i, n, err)
		}
		other := (i + 1) % len(tags)
		if err := direct.Get(ctx, "{"+tags[other]+"}:k").Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
			t.Errorf("master %d: GET of master %d's key: %v, want MOVED", i, other, err)
		}
	}
}

// TestClusterScript checks that a script runs over keys of one slot (one
// hash tag) and that the cluster refuses one over keys of two slots.
func TestClusterScript(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, cc := RedisCluster(t, 3, 0)
	move := redis.NewScript(`
local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[2], v)
redis.call('DEL', KEYS[1])
return v`)
	if err := cc.Set(ctx, "{proc:1}:a", "hello", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := move.Run(ctx, cc, []string{"{proc:1}:a", "{proc:1}:b"}).Text(); err != nil || got != "hello" {
		t.Fatalf("script over one slot: %q, %v; want hello", got, err)
	}
	if got, err := cc.Get(ctx, "{proc:1}:b").Result(); err != nil || got != "hello" {
		t.Errorf("after the script, {proc:1}:b = %q, %v; want hello", got, err)
	}
	if n, err := cc.Exists(ctx, "{proc:1}:a").Result(); err != nil || n != 0 {
		t.Errorf("after the script, {proc:1}:a exists: %d, %v", n, err)
	}
	// Two tags in two slots: Redis refuses a script over both.
	s1, _ := cc.ClusterKeySlot(ctx, "{proc:1}").Result()
	s2, _ := cc.ClusterKeySlot(ctx, "{proc:2}").Result()
	if s1 == s2 {
		t.Fatalf("{proc:1} and {proc:2} share slot %d", s1)
	}
	err := cc.Eval(ctx, `return redis.call('GET', KEYS[2])`, []string{"{proc:1}:b", "{proc:2}:b"}).Err()
	if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Errorf("script over two slots: %v, want CROSSSLOT", err)
	}
}

// TestClusterFailover kills a master of a cluster with a replica each:
// the replica takes its slots over, with what it had acknowledged, and
// the cluster client goes on, reading and writing there.
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	begin := time.Now()
	c, cc := RedisCluster(t, 3, 1)
	t.Logf("a cluster of 3 masters with a replica each formed in %s", time.Since(begin))

	// A key of master 1's slots, written there and acknowledged by its
	// replica (WAIT, on the connection that wrote it).
	key := ""
	for n := 0; key == ""; n++ {
		k := fmt.Sprintf("{p%d}:k", n)
		slot, err := cc.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if from, to := redisserver.SlotRange(1, 3); from <= int(slot) && int(slot) <= to {
			key = k
		}
	}
	killed := c.Masters[1]
	direct := redis.NewClient(&redis.Options{Addr: killed.Addr, MaxRetries: -1})
	conn := direct.Conn()
	if err := conn.Set(ctx, key, "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d, %v; want the replica's acknowledgement", n, err)
	}
	_ = conn.Close()
	_ = direct.Close()
	if got, err := cc.Get(ctx, key).Result(); err != nil || got != "before" {
		t.Fatalf("GET %s through the cluster client = %q, %v", key, got, err)
	}

	killed.Close() // a crash
	begin = time.Now()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	promoted, err := c.WaitTakeover(wctx, killed)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replica %s took the slots of master %s over in %s", promoted.Addr, killed.Addr, time.Since(begin))
	if promoted != c.Replicas[1][0] {
		t.Errorf("the new master is %s, want master 1's replica %s", promoted.Addr, c.Replicas[1][0].Addr)
	}

	if got, err := cc.Get(ctx, key).Result(); err != nil || got != "before" {
		t.Errorf("after the failover, GET %s = %q, %v; want what the replica acknowledged", key, got, err)
	}
	if err := cc.Set(ctx, key, "after", 0).Err(); err != nil {
		t.Errorf("after the failover, SET %s: %v", key, err)
	}
	onPromoted := redis.NewClient(&redis.Options{Addr: promoted.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = onPromoted.Close() })
	if got, err := onPromoted.Get(ctx, key).Result(); err != nil || got != "after" {
		t.Errorf("on the new master, GET %s = %q, %v; want after", key, got, err)
	}
	// The other masters were never touched.
	for _, i := range []int{0, 2} {
		if m := c.Masters[i]; !strings.Contains(mustInfo(t, cc, m.Addr), "role:master") {
			t.Errorf("master %d (%s) is no longer a master", i, m.Addr)
		}
	}
}

// TestWaitTakeoverOfARunningMaster checks that WaitTakeover refuses a
// master that still runs rather than wait for a failover that never comes.
func TestWaitTakeoverOfARunningMaster(t *testing.T) {
	t.Parallel()
	c, _ := RedisCluster(t, 1, 0)
	if _, err := c.WaitTakeover(context.Background(), c.Masters[0]); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Errorf("WaitTakeover of a running master: %v, want a refusal", err)
	}
}

func mustInfo(t *testing.T, cc *redis.ClusterClient, addr string) string {
	t.Helper()
	var info string
	err := cc.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
		if c.Options().Addr == addr {
			var err error
			info, err = c.Info(ctx, "replication").Result()
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return info
}
