// Package bench is `brain bench`: it measures a brain node on Redis and
// prints figures — turns per second, Redis commands and round trips per
// turn, wake latency, memory, and what an idle process costs. It reports;
// it never judges: no figure makes it fail.
//
// It owns the load generation and the measuring. It must not know how the
// node runs turns: it drives brain.Node through its public API (Create,
// Send, Config.OnCommit) and reads Redis's own counters.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/internal/redisdial"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/store"
)

// ErrInvalidConfig says Run was given a configuration it cannot run.
var ErrInvalidConfig = errors.New("bench: invalid config")

// Config configures a run. Start from DefaultConfig.
type Config struct {
	// RedisURL, when set (redis://...), is the server to measure; its
	// database must be empty. When empty, a throwaway redis-server is
	// started, or the embedded miniredis is used when there is no binary.
	// A Redis Cluster's URL (redis+cluster://HOST:PORT[,HOST:PORT...]) is
	// the cluster to measure, as Cluster says; every master must be empty.
	RedisURL string
	// AppendOnly runs the throwaway redis-server with its append-only file
	// on, fsynced every second, as a Redis that must survive its own crash
	// runs (--aof); with Cluster, the throwaway cluster's masters too. A
	// server given by RedisURL runs as it is configured.
	AppendOnly bool
	// Cluster, when more than 0, measures a Redis Cluster of that many
	// masters (no replicas) started for the run, or the one RedisURL
	// names, which must have that many: the throughput phase on one
	// throwaway redis-server first, then every phase on the cluster, and
	// how the two compare — each master's share of the Redis work, the
	// partitions it serves, the ceilings. A RedisURL of a cluster measures
	// it so with Cluster 0 too.
	Cluster int
	// Processes and Messages shape the throughput phase: Messages user
	// messages are posted to each of Processes BLOCKED processes.
	Processes, Messages int
	// Concurrency is the node's Concurrency: turns it runs at once.
	Concurrency int
	// Rate is how many messages per second the wake latency phase offers,
	// for LatencyDuration, round-robin over LatencyProcesses processes.
	Rate             int
	LatencyProcesses int
	LatencyDuration  time.Duration
	// Quiet is how long the quiet phase watches Redis's CPU, without a
	// node and then with an idle one; 0 skips the phase.
	Quiet time.Duration
	// Idle is how many BLOCKED processes the idle phase creates; 0 skips
	// the phase.
	Idle int
	// Posters is how many goroutines create processes and post the
	// throughput phase's messages.
	Posters int
	// CPUProfile, when set, is a file that receives a pprof CPU profile of
	// the throughput phase (node, posters and tracker).
	CPUProfile string
}

// DefaultConfig returns the configuration of a plain `brain bench`.
func DefaultConfig() Config {
	return Config{
		Processes:        200,
		Messages:         10,
		Concurrency:      16,
		Rate:             500,
		LatencyProcesses: 100,
		LatencyDuration:  5 * time.Second,
		Quiet:            3 * time.Second,
		Idle:             100_000,
		Posters:          4,
	}
}

func (c *Config) validate() error {
	var errs []error
	between := func(name string, v, lo, hi int) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("%s: must be between %d and %d (got %d)", name, lo, hi, v))
		}
	}
	between("Processes (--processes)", c.Processes, 1, 1_000_000)
	between("Messages (--messages)", c.Messages, 1, 10_000)
	between("Concurrency (--concurrency)", c.Concurrency, 1, 10_000)
	between("Rate (--rate)", c.Rate, 1, 1_000_000)
	between("Idle (--idle)", c.Idle, 0, 10_000_000)
	if c.Cluster < 0 || c.Cluster > store.DefaultPartitions {
		errs = append(errs, fmt.Errorf("Cluster (--cluster): must be between 1 and %d masters (each serving some of the %d partitions), "+
			"or 0 to measure one Redis (got %d)", store.DefaultPartitions, store.DefaultPartitions, c.Cluster))
	}
	between("LatencyProcesses", c.LatencyProcesses, 1, 1_000_000)
	between("Posters", c.Posters, 1, 1024)
	if c.Processes*c.Messages > 10_000_000 {
		errs = append(errs, fmt.Errorf("Processes × Messages: must be at most 10000000 (got %d × %d)", c.Processes, c.Messages))
	}
	if c.Quiet < 0 || c.Quiet > time.Hour {
		errs = append(errs, fmt.Errorf("Quiet (--quiet): must be between 0 (skip the phase) and 1h (got %s)", c.Quiet))
	}
	if c.LatencyDuration < 100*time.Millisecond || c.LatencyDuration > time.Hour {
		errs = append(errs, fmt.Errorf("LatencyDuration: must be between 100ms and 1h (got %s)", c.LatencyDuration))
	}
	switch {
	case c.RedisURL == "":
	case redisdial.IsClusterURL(c.RedisURL):
		if _, err := redisdial.ParseClusterURL(c.RedisURL); err != nil {
			errs = append(errs, fmt.Errorf("RedisURL (--redis): %w", err))
		}
	case c.Cluster > 0:
		errs = append(errs, fmt.Errorf("Cluster (--cluster): measures a Redis Cluster, and --redis names one server: give a cluster's "+
			"seeds (--redis redis+cluster://HOST:PORT[,HOST:PORT...]), or leave --redis out to start a cluster of %d masters", c.Cluster))
	default:
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			errs = append(errs, fmt.Errorf("RedisURL (--redis): %w; want redis://[user:password@]host:port/db", err))
		}
	}
	if c.RedisURL != "" {
		if c.AppendOnly {
			errs = append(errs, errors.New("AppendOnly (--aof): only for the throwaway redis-server; a server given with --redis keeps its own persistence settings (CONFIG SET appendonly yes turns its append-only file on)"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// Run measures a node as cfg says and writes the report to w, phase by
// phase. It fails on a misconfiguration, a Redis error or a process that
// stops making progress; never on a figure. Its errors start with "bench:".
func Run(ctx context.Context, cfg Config, w io.Writer, log *zap.Logger) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if log == nil {
		log = zap.NewNop()
	}
	log = log.Named("bench")
	if cfg.clusterMode() {
		return runClusterMode(ctx, cfg, w, log)
	}
	tgt, err := openTarget(ctx, cfg.RedisURL, redisserver.Options{AppendOnly: cfg.AppendOnly}, log)
	if err != nil {
		return err
	}
	defer tgt.close()
	return run(ctx, cfg, tgt, w, log)
}

// run runs every phase on tgt.
func run(ctx context.Context, cfg Config, tgt *target, w io.Writer, log *zap.Logger) error {
	b, err := newBench(cfg, tgt, log)
	if err != nil {
		return err
	}
	defer b.close()
	rep := &report{w: w}
	b.header(rep, nil)

	thr, err := b.throughput(ctx, 0, cfg.CPUProfile)
	if err != nil {
		return err
	}
	thr.write(rep, cfg)
	return b.rest(ctx, rep)
}

// rest runs the phases after the throughput phase, and writes the footer.
func (b *bench) rest(ctx context.Context, rep *report) error {
	cfg := b.cfg
	if err := b.between(ctx); err != nil {
		return err
	}
	small, err := b.throughput(ctx, smallCache(cfg), "")
	if err != nil {
		return err
	}
	small.writeSmallCache(rep, cfg)
	if err := b.between(ctx); err != nil {
		return err
	}
	lat, err := b.latency(ctx)
	if err != nil {
		return err
	}
	lat.write(rep, cfg)
	if err := b.between(ctx); err != nil {
		return err
	}
	lv, err := b.live(ctx)
	if err != nil {
		return err
	}
	lv.write(rep, cfg)
	if cfg.Quiet > 0 {
		if err := b.between(ctx); err != nil {
			return err
		}
	}
	q, err := b.quiet(ctx)
	if err != nil {
		return err
	}
	q.write(rep, cfg, len(b.tgt.servers))
	if cfg.Idle > 0 {
		if err := b.between(ctx); err != nil {
			return err
		}
	}
	idle, err := b.idle(ctx)
	if err != nil {
		return err
	}
	idle.write(rep, cfg)
	b.footer(rep)
	if rep.err != nil {
		return fmt.Errorf("bench: write the report: %w", rep.err)
	}
	return nil
}

// clusterMode says the run measures a Redis Cluster against one Redis.
func (c *Config) clusterMode() bool { return c.Cluster > 0 || redisdial.IsClusterURL(c.RedisURL) }

// runClusterMode opens the cluster (started, or given) and one throwaway
// redis-server, and runs on both.
func runClusterMode(ctx context.Context, cfg Config, w io.Writer, log *zap.Logger) error {
	var clus *target
	var err error
	if cfg.RedisURL != "" {
		clus, err = openGivenCluster(ctx, cfg.RedisURL, cfg.Cluster)
	} else {
		clus, err = openThrowawayCluster(ctx, cfg.Cluster, redisserver.Options{AppendOnly: cfg.AppendOnly})
	}
	if err != nil {
		return err
	}
	defer clus.close()
	one, err := openThrowaway(ctx, redisserver.Options{AppendOnly: cfg.AppendOnly})
	if errors.Is(err, redisserver.ErrNoBinary) {
		return fmt.Errorf("bench: the cluster is measured against one throwaway redis-server, and there is no redis-server binary: "+
			"install it (apt-get install -y redis-server): %w", err)
	}
	if err != nil {
		return err
	}
	defer one.close()
	return runCluster(ctx, cfg, one, clus, w, log)
}

// runCluster runs the throughput phase on one, then every phase on clus,
// and writes how the two compare after their throughput figures.
func runCluster(ctx context.Context, cfg Config, one, clus *target, w io.Writer, log *zap.Logger) error {
	b, err := newBench(cfg, clus, log)
	if err != nil {
		return err
	}
	defer b.close()
	rep := &report{w: w}
	b.header(rep, one)

	single, err := newBench(cfg, one, log.Named("one"))
	if err != nil {
		return err
	}
	defer single.close()
	thrOne, err := single.throughput(ctx, 0, "")
	if err != nil {
		return fmt.Errorf("%w (on one redis-server, %s)", err, one.servers[0])
	}
	thrOne.writeThroughput(rep, cfg, "throughput on one redis-server")
	thr, err := b.throughput(ctx, 0, cfg.CPUProfile)
	if err != nil {
		return fmt.Errorf("%w (on the cluster)", err)
	}
	thr.writeThroughput(rep, cfg, fmt.Sprintf("throughput on the redis cluster of %d masters", len(clus.servers)))
	writeComparison(rep, cfg, thrOne, thr, clus, "the same load")
	thr.writeMemory(rep)

	// The same again, paced: one message in flight per process, so that
	// both drain one message a turn and compare per turn.
	if err := errors.Join(single.between(ctx), b.between(ctx)); err != nil {
		return err
	}
	pacedOne, err := single.paced(ctx)
	if err != nil {
		return fmt.Errorf("%w (paced, on one redis-server, %s)", err, one.servers[0])
	}
	pacedClus, err := b.paced(ctx)
	if err != nil {
		return fmt.Errorf("%w (paced, on the cluster)", err)
	}
	writeComparison(rep, cfg, pacedOne, pacedClus, clus, "paced: one message in flight per process, one message a turn")
	return b.rest(ctx, rep)
}
