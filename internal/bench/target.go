package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/internal/redisdial"
	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/internal/redisserver"
)

// ErrNotEmpty says the database --redis names holds keys.
var ErrNotEmpty = errors.New("bench: database not empty")

// kind says what Redis a run measures.
type kind int

const (
	throwaway kind = iota // a redis-server started for the run
	given                 // the user's --redis URL
	embedded              // miniredis, in this process
)

// target is the Redis a run measures.
type target struct {
	kind kind
	opts redis.Options // copied for every client
	// version is the server's redis_version, "" when INFO does not say.
	version string
	// persistence says what the server keeps on disk.
	persistence string
	close       func()
}

// client returns a new client of the target, made as brain serve makes
// its own.
func (t *target) client() *redis.Client {
	o := t.opts
	redisdial.Unprobed(&o)
	return redis.NewClient(&o)
}

// mayFlush says the run owns the whole server and may empty it.
func (t *target) mayFlush() bool { return t.kind != given }

// describe says which Redis the figures are from, for the report; it never
// shows a password.
func (t *target) describe() string {
	switch t.kind {
	case given:
		return fmt.Sprintf("redis-server %s at %s db %d (--redis; not flushed: bench's processes stay there, FLUSHDB removes them)",
			orUnknown(t.version), t.opts.Addr, t.opts.DB)
	case embedded:
		return "embedded miniredis (no redis-server binary found)"
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
	srv, err := redisserver.Start(opts)
	if errors.Is(err, redisserver.ErrNoBinary) {
		log.Warn("no redis-server binary: measuring the embedded miniredis; the figures are NOT representative of Redis",
			zap.Error(err))
		return openEmbedded()
	}
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	t := &target{kind: throwaway, opts: redis.Options{Addr: srv.Addr}, close: srv.Close}
	t.version, t.persistence = serverVersion(ctx, t), persistenceOf(ctx, t)
	return t, nil
}

// openGiven checks that the database of url is empty: brain's keys have
// fixed names, so a run would mix its processes with whatever is there.
func openGiven(ctx context.Context, url string) (*target, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%w: RedisURL (--redis): %w", ErrInvalidConfig, err)
	}
	t := &target{kind: given, opts: *opts, close: func() {}}
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
	t.version, t.persistence = serverVersion(ctx, t), persistenceOf(ctx, t)
	return t, nil
}

// openEmbedded starts a miniredis whose keys expire in real time (leases
// depend on it).
func openEmbedded() (*target, error) {
	mr := miniredis.NewMiniRedis()
	mr.ClockTTL(true)
	if err := mr.Start(); err != nil {
		return nil, fmt.Errorf("bench: embedded miniredis: %w", err)
	}
	return &target{kind: embedded, opts: redis.Options{Addr: mr.Addr()}, persistence: "none: in this process's memory", close: mr.Close}, nil
}

// serverVersion returns the server's redis_version, or "".
func serverVersion(ctx context.Context, t *target) string {
	rdb := t.client()
	defer rdb.Close()
	txt, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return ""
	}
	return redisinfo.Field(txt, "redis_version")
}

// persistenceOf says what the server keeps on disk, or why that is not
// known.
func persistenceOf(ctx context.Context, t *target) string {
	rdb := t.client()
	defer rdb.Close()
	p, err := redisinfo.ReadPersistence(ctx, rdb)
	if err != nil {
		return fmt.Sprintf("unknown (%v)", err)
	}
	return p.String()
}
