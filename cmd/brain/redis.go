package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/internal/redisdial"
	"github.com/engine-brain/brain/internal/redisinfo"
)

// redisPingTimeout bounds the first contact with Redis at start.
const redisPingTimeout = 5 * time.Second

// openRedis connects to the Redis that --redis names, or starts the
// embedded one: a *redis.ClusterClient for a redis+cluster:// URL, a
// *redis.Client otherwise. release closes the client (and stops the
// embedded server).
func openRedis(ctx context.Context, spec string, log *zap.Logger) (rdb redis.UniversalClient, release func(), err error) {
	if spec == embeddedRedis {
		mr := miniredis.NewMiniRedis()
		mr.ClockTTL(true) // leases must expire in real time
		if err := mr.Start(); err != nil {
			return nil, nil, fmt.Errorf("embedded redis: %w", err)
		}
		log.Warn("using an embedded in-memory Redis: state is in memory and lost on exit; use --redis redis://HOST:PORT to keep it")
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		return rdb, func() { _ = rdb.Close(); mr.Close() }, nil
	}
	target, err := parseRedisURL(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("--redis: %w", err) // checked when loaded; kept for safety
	}
	// Where it is, for errors and the log: never the URL, which may carry
	// a password.
	var where string
	var db int
	switch {
	case target.cluster != nil:
		rdb = redisdial.NewClusterClient(target.cluster)
		where = "the redis cluster at " + strings.Join(target.cluster.Addrs, ", ")
	case target.failover != nil:
		f := target.failover
		rdb = redis.NewFailoverClient(f)
		where = fmt.Sprintf("master %s of the sentinels at %s", f.MasterName, strings.Join(f.SentinelAddrs, ", "))
		db = f.DB
	default:
		redisdial.Unprobed(target.server)
		rdb = redis.NewClient(target.server)
		where, db = target.server.Addr, target.server.DB
	}
	pctx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		_ = rdb.Close()
		if target.cluster != nil && redisdial.NotInClusterMode(err) {
			return nil, nil, fmt.Errorf("%s: the server is not in cluster mode (%w): a redis+cluster:// URL is for a Redis Cluster; "+
				"reach one server with redis://HOST:PORT", where, err)
		}
		if target.cluster != nil {
			return nil, nil, fmt.Errorf("%s does not answer: %w", where, err)
		}
		return nil, nil, fmt.Errorf("redis at %s (db %d) does not answer: %w", where, db, err)
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err = checkCluster(pctx, cc, where)
	} else {
		err = checkNotCluster(pctx, rdb.(*redis.Client), where)
	}
	if err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	log.Info("connected to redis", zap.String("addr", where), zap.Int("db", db))
	warnOfVolatility(pctx, rdb, log)
	warnOfEviction(pctx, rdb, log)
	return rdb, func() { _ = rdb.Close() }, nil
}

// checkNotCluster refuses a server in cluster mode reached through a
// redis:// URL: a client of one server cannot follow a cluster's keys to
// the masters that keep them. (A server that will not say is taken for a
// standalone one.)
func checkNotCluster(ctx context.Context, rdb *redis.Client, where string) error {
	if on, err := redisinfo.ClusterEnabled(ctx, rdb); err == nil && on {
		return fmt.Errorf("redis at %s runs in cluster mode, which a redis:// URL cannot follow (a cluster spreads its "+
			"keys over its masters): name it with --redis redis+cluster://HOST:PORT[,HOST:PORT...], its nodes' addresses", where)
	}
	return nil
}

// checkCluster makes sure every master of the cluster that cc reached
// answers: a turn's scripts may need any of them.
func checkCluster(ctx context.Context, cc *redis.ClusterClient, where string) error {
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() }); err != nil {
		return fmt.Errorf("%s: cannot reach its masters: %w", where, err)
	}
	return nil
}

// redisTarget is the Redis a --redis URL names: a server; or, when the
// URL has master_name, the master that the Redis Sentinels at its
// address (and its addr parameters) name, followed through failovers; or,
// for a redis+cluster:// URL, the Redis Cluster its seeds belong to.
type redisTarget struct {
	server   *redis.Options
	failover *redis.FailoverOptions
	cluster  *redis.ClusterOptions
}

// parseRedisURL reads a --redis URL other than embedded.
func parseRedisURL(spec string) (redisTarget, error) {
	if redisdial.IsClusterURL(spec) {
		c, err := redisdial.ParseClusterURL(spec)
		if err != nil {
			return redisTarget{}, err
		}
		return redisTarget{cluster: c}, nil
	}
	if u, err := url.Parse(spec); err == nil && u.Query().Has("master_name") {
		f, err := redis.ParseFailoverURL(spec)
		if err != nil {
			return redisTarget{}, err
		}
		if f.MasterName == "" {
			return redisTarget{}, errors.New("master_name is empty: name the master the sentinels monitor")
		}
		return redisTarget{failover: f}, nil
	}
	o, err := redis.ParseURL(spec)
	if err != nil {
		return redisTarget{}, err
	}
	return redisTarget{server: o}, nil
}

// eachServer calls fn with a client of each server that keeps brain's
// data: the one server, or each master of a cluster (what one INFO says
// of its server holds for that server only). addr names the server in a
// log, "" when there is one. It fails when it cannot tell the servers.
func eachServer(ctx context.Context, rdb redis.UniversalClient, fn func(ctx context.Context, server *redis.Client, addr string)) error {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, func(ctx context.Context, master *redis.Client) error {
			fn(ctx, master, master.Options().Addr)
			return nil
		})
	case *redis.Client:
		fn(ctx, c, "")
		return nil
	default:
		return fmt.Errorf("a %T, which brain does not make", rdb)
	}
}

// serverField names the server a log is about, on a cluster.
func serverField(addr string) zap.Field {
	if addr == "" {
		return zap.Skip()
	}
	return zap.String("master", addr)
}

// warnOfVolatility warns when Redis keeps no append-only file: a node's
// crash loses nothing whatever Redis keeps, but a crash of Redis itself
// loses what its disk lacks. On a cluster it looks at every master.
func warnOfVolatility(ctx context.Context, rdb redis.UniversalClient, log *zap.Logger) {
	err := eachServer(ctx, rdb, func(ctx context.Context, server *redis.Client, addr string) {
		p, err := redisinfo.ReadPersistence(ctx, server)
		switch {
		case err != nil:
			log.Warn("cannot tell what redis keeps on disk", serverField(addr), zap.Error(err))
		case !p.AOF:
			log.Warn("redis keeps no append-only file: a crash or restart of redis loses what changed since its last snapshot "+
				"(processes, messages, turns); run it with appendonly yes (README: Running the server)",
				serverField(addr), zap.Stringer("persistence", p))
		default:
			log.Info("redis persistence", serverField(addr), zap.Stringer("persistence", p))
		}
	})
	if err != nil {
		log.Warn("cannot tell what redis keeps on disk", zap.Error(err))
	}
}

// warnOfEviction warns when Redis may delete keys on its own to free
// memory: brain cannot lose one (see redisinfo.Eviction), so Redis must run
// with maxmemory-policy noeviction, under which a full Redis refuses writes
// and turns fail with errors instead of processes losing their keys. On a
// cluster it looks at every master.
func warnOfEviction(ctx context.Context, rdb redis.UniversalClient, log *zap.Logger) {
	err := eachServer(ctx, rdb, func(ctx context.Context, server *redis.Client, addr string) {
		e, err := redisinfo.ReadEviction(ctx, server)
		switch {
		case err != nil:
			log.Warn("cannot tell whether redis evicts keys", serverField(addr), zap.Error(err))
		case !e.Safe():
			log.Warn("redis may evict keys when its memory is full, and an evicted key loses a process's record, "+
				"conversation, lease or wake: run it with maxmemory-policy noeviction (README: Running the server)",
				serverField(addr), zap.Stringer("eviction", e))
		}
	})
	if err != nil {
		log.Warn("cannot tell whether redis evicts keys", zap.Error(err))
	}
}
