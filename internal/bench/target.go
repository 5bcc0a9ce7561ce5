package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/internal/redisdial"
	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/store"
)

// ErrNotEmpty says the database --redis names holds keys.
var ErrNotEmpty = errors.New("bench: database not empty")

// kind says what Redis a run measures.
type kind int

const (
	throwaway        kind = iota // a redis-server started for the run
	given                        // the user's --redis URL
	embedded                     // miniredis, in this process
	throwawayCluster             // a Redis Cluster started for the run (--cluster N)
	givenCluster                 // the user's --redis redis+cluster:// URL
)

// target is the Redis a run measures: one server, or a Redis Cluster.
type target struct {
	kind kind
	opts redis.Options // one server's: copied for every client
	// cluster is a cluster's options, copied for every client; nil for
	// one server.
	cluster *redis.ClusterOptions
	// servers are the addresses of the servers that keep the data: the
	// one server, or a cluster's masters in the order of their slots.
	servers []string
	// partitionServer is, on a cluster, the index in servers of the
	// master that serves each of the store's DefaultPartitions partitions
	// (the slot of its hash tag).
	partitionServer []int
	// version is the server's redis_version, "" when INFO does not say.
	version string
	// persistence says what the servers keep on disk.
	persistence string
	close       func()
}

// isCluster says the target is a Redis Cluster.
func (t *target) isCluster() bool { return t.cluster != nil }

// client returns a new client of the target, made as brain serve makes
// its own: a *redis.ClusterClient of a cluster.
func (t *target) client() redis.UniversalClient {
	if t.isCluster() {
		o := *t.cluster
		return redisdial.NewClusterClient(&o)
	}
	o := t.opts
	redisdial.Unprobed(&o)
	return redis.NewClient(&o)
}

// admins returns a new client of each of servers, in that order: what one
// INFO says of a server holds for that server only.
func (t *target) admins() []*redis.Client {
	out := make([]*redis.Client, len(t.servers))
	for i, addr := range t.servers {
		o := t.opts
		if c := t.cluster; c != nil {
			o = redis.Options{Addr: addr, Username: c.Username, Password: c.Password, TLSConfig: c.TLSConfig,
				DialTimeout: c.DialTimeout, ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout}
		}
		out[i] = redis.NewClient(&o)
	}
	return out
}

// mayFlush says the run owns the whole server and may empty it.
func (t *target) mayFlush() bool { return t.kind != given && t.kind != givenCluster }

// describe says which Redis the figures are from, for the report; it never
// shows a password.
func (t *target) describe() string {
	switch t.kind {
	case given:
		return fmt.Sprintf("redis-server %s at %s db %d (--redis; not flushed: bench's processes stay there, FLUSHDB removes them)",
			orUnknown(t.version), t.opts.Addr, t.opts.DB)
	case embedded:
		return "embedded miniredis (no redis-server binary found)"
	case throwawayCluster:
		return fmt.Sprintf("throwaway redis cluster of %d masters, no replicas, redis-server %s on %s (started for this run, flushed between phases)",
			len(t.servers), orUnknown(t.version), strings.Join(t.servers, ", "))
	case givenCluster:
		return fmt.Sprintf("redis cluster of %d masters, redis-server %s, at %s (--redis; not flushed: bench's processes stay there, FLUSHDB on each master removes them)",
			len(t.servers), orUnknown(t.version), strings.Join(t.servers, ", "))
	default:
		return fmt.Sprintf("throwaway redis-server %s on %s (started for this run, flushed between phases)", orUnknown(t.version), t.opts.Addr)
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "(version unknown)"
	}
	return s
}

// openTarget returns the server of url, or a throwaway redis-server run
// with opts when url is empty, or the embedded miniredis when there is no
// binary.
func openTarget(ctx context.Context, url string, opts redisserver.Options, log *zap.Logger) (*target, error) {
	if url != "" {
		return openGiven(ctx, url)
	}
	t, err := openThrowaway(ctx, opts)
	if errors.Is(err, redisserver.ErrNoBinary) {
		log.Warn("no redis-server binary: measuring the embedded miniredis; the figures are NOT representative of Redis",
			zap.Error(err))
		return openEmbedded()
	}
	return t, err
}

// openThrowaway starts a redis-server run with opts.
func openThrowaway(ctx context.Context, opts redisserver.Options) (*target, error) {
	srv, err := redisserver.Start(opts)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	t := &target{kind: throwaway, opts: redis.Options{Addr: srv.Addr}, servers: []string{srv.Addr}, close: srv.Close}
	t.describeServers(ctx)
	return t, nil
}

// openGiven checks that the database of url is empty: brain's keys have
// fixed names, so a run would mix its processes with whatever is there.
func openGiven(ctx context.Context, url string) (*target, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%w: RedisURL (--redis): %w", ErrInvalidConfig, err)
	}
	t := &target{kind: given, opts: *opts, servers: []string{opts.Addr}, close: func() {}}
	rdb := t.client()
	defer rdb.Close()
	n, err := rdb.DBSize(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("bench: --redis: %s db %d: %w", opts.Addr, opts.DB, err)
	}
	if n > 0 {
		return nil, fmt.Errorf("%w: --redis: db %d at %s holds %d keys; brain bench writes processes under brain's fixed key names, "+
			"so it runs only on an empty database: point --redis at an empty one (e.g. redis://%s/15), or leave --redis out "+
			"to measure a throwaway redis-server", ErrNotEmpty, opts.DB, opts.Addr, n, opts.Addr)
	}
	t.describeServers(ctx)
	return t, nil
}

// openThrowawayCluster starts a Redis Cluster of masters masters, without
// replicas, each run with opts.
func openThrowawayCluster(ctx context.Context, masters int, opts redisserver.Options) (*target, error) {
	c, err := redisserver.StartCluster(redisserver.ClusterOptions{Masters: masters, AppendOnly: opts.AppendOnly})
	if errors.Is(err, redisserver.ErrNoBinary) {
		return nil, fmt.Errorf("bench: --cluster %d starts redis-servers in cluster mode, and there is no redis-server binary: "+
			"install it (apt-get install -y redis-server), or point --redis at a cluster (redis+cluster://HOST:PORT): %w", masters, err)
	}
	if err != nil {
		return nil, fmt.Errorf("bench: --cluster %d: %w", masters, err)
	}
	t := &target{kind: throwawayCluster, cluster: &redis.ClusterOptions{Addrs: c.Addrs()}, close: c.Close}
	if err := t.mapCluster(ctx); err != nil {
		t.close()
		return nil, err
	}
	if len(t.servers) != masters {
		t.close()
		return nil, fmt.Errorf("bench: --cluster %d: the cluster started has %d masters", masters, len(t.servers))
	}
	return t, nil
}

// openGivenCluster checks that every master of the cluster that url
// names is empty, as openGiven does for one server; masters, when not 0,
// is the number of masters it must have (--cluster N given too).
func openGivenCluster(ctx context.Context, url string, masters int) (*target, error) {
	opts, err := redisdial.ParseClusterURL(url)
	if err != nil {
		return nil, fmt.Errorf("%w: RedisURL (--redis): %w", ErrInvalidConfig, err)
	}
	t := &target{kind: givenCluster, cluster: opts, close: func() {}}
	if err := t.mapCluster(ctx); err != nil {
		return nil, err
	}
	if masters != 0 && len(t.servers) != masters {
		return nil, fmt.Errorf("%w: --cluster %d: the cluster at %s has %d masters (%s): give --cluster %d, or leave --cluster out",
			ErrInvalidConfig, masters, strings.Join(opts.Addrs, ", "), len(t.servers), strings.Join(t.servers, ", "), len(t.servers))
	}
	admins := t.admins()
	defer closeAll(admins)
	for i, admin := range admins {
		n, err := admin.DBSize(ctx).Result()
		if err != nil {
			return nil, fmt.Errorf("bench: --redis: master %s of the cluster: DBSIZE: %w", t.servers[i], err)
		}
		if n > 0 {
			return nil, fmt.Errorf("%w: --redis: master %s of the cluster at %s holds %d keys; brain bench writes processes under brain's fixed key names, "+
				"so it runs only on an empty cluster: FLUSHALL each master of a cluster you may empty, or point --redis at another, or use "+
				"--cluster N without --redis to measure a throwaway cluster", ErrNotEmpty, t.servers[i], strings.Join(opts.Addrs, ", "), n)
		}
	}
	return t, nil
}

// mapCluster reads which masters serve the cluster's slots (CLUSTER
// SLOTS) into servers, in the order of their first slot, and which of
// them serves each of the store's partitions (the client's master of a key
// of the partition's hash tag) into partitionServer; then the masters'
// version and persistence.
func (t *target) mapCluster(ctx context.Context) error {
	where := "the redis cluster at " + strings.Join(t.cluster.Addrs, ", ")
	rdb := t.client()
	defer rdb.Close()
	ranges, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		if redisdial.NotInClusterMode(err) {
			return fmt.Errorf("bench: --redis: %s: the server is not in cluster mode (%w): a redis+cluster:// URL is for a Redis Cluster; "+
				"measure one server with redis://HOST:PORT/DB", where, err)
		}
		return fmt.Errorf("bench: --redis: %s: CLUSTER SLOTS: %w", where, err)
	}
	slices.SortFunc(ranges, func(a, b redis.ClusterSlot) int { return cmp.Compare(a.Start, b.Start) })
	index := map[string]int{}
	for _, r := range ranges {
		if len(r.Nodes) == 0 {
			return fmt.Errorf("bench: %s: slots %d-%d have no master (CLUSTER SLOTS)", where, r.Start, r.End)
		}
		if _, ok := index[r.Nodes[0].Addr]; !ok {
			index[r.Nodes[0].Addr] = len(t.servers)
			t.servers = append(t.servers, r.Nodes[0].Addr)
		}
	}
	cc := rdb.(*redis.ClusterClient)
	t.partitionServer = make([]int, store.DefaultPartitions)
	for n := range t.partitionServer {
		key := store.WakeStream(store.DefaultPartitions, n, "chat")
		m, err := cc.MasterForKey(ctx, key) // the client's slot map: no round trip
		if err != nil {
			return fmt.Errorf("bench: %s: the master of %s: %w", where, key, err)
		}
		i, ok := index[m.Options().Addr]
		if !ok {
			return fmt.Errorf("bench: %s: %s, the master of partition %d, serves no slot (CLUSTER SLOTS)", where, m.Options().Addr, n)
		}
		t.partitionServer[n] = i
	}
	t.describeServers(ctx)
	return nil
}

// describeServers reads the servers' version (the first's) and what they
// keep on disk (said once when they all keep the same, per master when
// not).
func (t *target) describeServers(ctx context.Context) {
	admins := t.admins()
	defer closeAll(admins)
	if txt, err := admins[0].Info(ctx, "server").Result(); err == nil {
		t.version = redisinfo.Field(txt, "redis_version")
	}
	each := make([]string, len(admins))
	for i, admin := range admins {
		if p, err := redisinfo.ReadPersistence(ctx, admin); err != nil {
			each[i] = fmt.Sprintf("unknown (%v)", err)
		} else {
			each[i] = p.String()
		}
	}
	if len(slices.Compact(slices.Clone(each))) == 1 {
		t.persistence = each[0]
		if len(each) > 1 {
			t.persistence += ", every master"
		}
		return
	}
	for i := range each {
		each[i] = t.servers[i] + ": " + each[i]
	}
	t.persistence = strings.Join(each, "; ")
}

// openEmbedded starts a miniredis whose keys expire in real time (leases
// depend on it).
func openEmbedded() (*target, error) {
	mr := miniredis.NewMiniRedis()
	mr.ClockTTL(true)
	if err := mr.Start(); err != nil {
		return nil, fmt.Errorf("bench: embedded miniredis: %w", err)
	}
	return &target{kind: embedded, opts: redis.Options{Addr: mr.Addr()}, servers: []string{mr.Addr()},
		persistence: "none: in this process's memory", close: mr.Close}, nil
}

func closeAll(clients []*redis.Client) {
	for _, c := range clients {
		_ = c.Close()
	}
}
