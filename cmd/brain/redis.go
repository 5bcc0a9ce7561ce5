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
// embedded one. release closes the client (and stops the embedded server).
func openRedis(ctx context.Context, spec string, log *zap.Logger) (rdb *redis.Client, release func(), err error) {
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
	if f := target.failover; f != nil {
		rdb = redis.NewFailoverClient(f)
		where = fmt.Sprintf("master %s of the sentinels at %s", f.MasterName, strings.Join(f.SentinelAddrs, ", "))
		db = f.DB
	} else {
		redisdial.Unprobed(target.server)
		rdb = redis.NewClient(target.server)
		where, db = target.server.Addr, target.server.DB
	}
	pctx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, nil, fmt.Errorf("redis at %s (db %d) does not answer: %w", where, db, err)
	}
	// (A server that will not say is taken for a standalone one.)
	if on, err := redisinfo.ClusterEnabled(pctx, rdb); err == nil && on {
		_ = rdb.Close()
		return nil, nil, fmt.Errorf("redis at %s runs in cluster mode, which brain does not support: a turn's commit "+
			"updates a process and the shared wake queue and state indexes in one atomic script, which Redis Cluster "+
			"runs only on the keys of one slot; use one Redis server (with replicas, and Sentinel to fail over)", where)
	}
	log.Info("connected to redis", zap.String("addr", where), zap.Int("db", db))
	warnOfVolatility(pctx, rdb, log)
	warnOfEviction(pctx, rdb, log)
	return rdb, func() { _ = rdb.Close() }, nil
}

// redisTarget is the Redis a --redis URL names: a server, or, when the
// URL has master_name, the master that the Redis Sentinels at its
// address (and its addr parameters) name, followed through failovers.
type redisTarget struct {
	server   *redis.Options
	failover *redis.FailoverOptions
}

// parseRedisURL reads a --redis URL other than embedded.
func parseRedisURL(spec string) (redisTarget, error) {
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

// warnOfVolatility warns when Redis keeps no append-only file: a node's
// crash loses nothing whatever Redis keeps, but a crash of Redis itself
// loses what its disk lacks.
func warnOfVolatility(ctx context.Context, rdb *redis.Client, log *zap.Logger) {
	p, err := redisinfo.ReadPersistence(ctx, rdb)
	switch {
	case err != nil:
		log.Warn("cannot tell what redis keeps on disk", zap.Error(err))
	case !p.AOF:
		log.Warn("redis keeps no append-only file: a crash or restart of redis loses what changed since its last snapshot "+
			"(processes, messages, turns); run it with appendonly yes (README: Running the server)",
			zap.Stringer("persistence", p))
	default:
		log.Info("redis persistence", zap.Stringer("persistence", p))
	}
}

// warnOfEviction warns when Redis may delete keys on its own to free
// memory: brain cannot lose one (see redisinfo.Eviction), so Redis must run
// with maxmemory-policy noeviction, under which a full Redis refuses writes
// and turns fail with errors instead of processes losing their keys.
func warnOfEviction(ctx context.Context, rdb *redis.Client, log *zap.Logger) {
	e, err := redisinfo.ReadEviction(ctx, rdb)
	switch {
	case err != nil:
		log.Warn("cannot tell whether redis evicts keys", zap.Error(err))
	case !e.Safe():
		log.Warn("redis may evict keys when its memory is full, and an evicted key loses a process's record, "+
			"conversation, lease or wake: run it with maxmemory-policy noeviction (README: Running the server)",
			zap.Stringer("eviction", e))
	}
}
