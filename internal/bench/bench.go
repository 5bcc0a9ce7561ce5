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

	"github.com/engine-brain/brain/internal/redisserver"
)

// ErrInvalidConfig says Run was given a configuration it cannot run.
var ErrInvalidConfig = errors.New("bench: invalid config")

// Config configures a run. Start from DefaultConfig.
type Config struct {
	// RedisURL, when set (redis://...), is the server to measure; its
	// database must be empty. When empty, a throwaway redis-server is
	// started, or the embedded miniredis is used when there is no binary.
	RedisURL string
	// AppendOnly runs the throwaway redis-server with its append-only file
	// on, fsynced every second, as a Redis that must survive its own crash
	// runs (--aof). A server given by RedisURL runs as it is configured.
	AppendOnly bool
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
	between("LatencyProcesses", c.LatencyProcesses, 1, 1_000_000)
	between("Posters", c.Posters, 1, 1024)
	if c.Processes*c.Messages > 10_000_000 {
		errs = append(errs, fmt.Errorf("Processes × Messages: must be at most 10000000 (got %d × %d)", c.Processes, c.Messages))
	}
	if c.LatencyDuration < 100*time.Millisecond || c.LatencyDuration > time.Hour {
		errs = append(errs, fmt.Errorf("LatencyDuration: must be between 100ms and 1h (got %s)", c.LatencyDuration))
	}
	if c.RedisURL != "" {
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			errs = append(errs, fmt.Errorf("RedisURL (--redis): %w; want redis://[user:password@]host:port/db", err))
		}
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
	b.header(rep)

	thr, err := b.throughput(ctx, 0, cfg.CPUProfile)
	if err != nil {
		return err
	}
	thr.write(rep, cfg)
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
