package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/internal/bench"
	"github.com/engine-brain/brain/store"
)

const benchUsage = `Usage:
  brain bench [--redis URL | --aof] [--processes P] [--messages M]
              [--concurrency C] [--rate R] [--quiet D] [--idle N]
              [--cpuprofile FILE]
  brain bench --cluster N [--redis redis+cluster://HOST:PORT[,...] | --aof] ...

Measures one node with a scripted, zero-latency model (every turn: one
tell_user round, then respond) and prints figures; it never fails because a
machine is slow.

  throughput    P BLOCKED processes get M messages each, posted as fast as
                possible: turns/s, messages/s, Redis commands, script time,
                round trips and CPU per turn, the node's CPU per turn
  wake latency  messages offered at R/s for 5s, round-robin over 100
                processes: p50, p90, p99, max from Send to the turn's start
  live turns    8 waves of C turns whose model streams a long answer slowly,
                watched from another node, then each paused or stopped
                through another node: p50, p99, max from the model's first
                token to the first progress at the watcher, and from the
                pause's or stop's answer to the halted turn's commit
  memory        Go heap and process RSS after the throughput phase
  small cache   the throughput phase again, the node keeping the logs of
                half the processes: turns/s and CPU per turn when claims
                often read their log back
  quiet         Redis's CPU for D (3s) without a node, then with a node that
                has nothing to do: what an idle node costs Redis a second
                (--quiet 0 skips it)
  idle          N BLOCKED processes: node heap per process, goroutines before
                and after, Redis bytes per process (--idle 0 skips it)

Redis: without --redis, a throwaway redis-server is started for the run and
flushed between phases, keeping nothing on disk (with --aof: an append-only
file fsynced every second, as a Redis that must survive its own crash); when
there is no redis-server binary, the embedded miniredis is used and the
figures are NOT representative. With --redis, that
server is measured, but only if its database is empty: brain's key names are
fixed, so bench refuses a database holding any key, and it leaves its
processes there when done (FLUSHDB removes them).

Redis Cluster: --cluster N starts a cluster of N masters (no replicas) of
throwaway redis-servers, or measures the one --redis redis+cluster://
names (every master empty; N, when given, its number of masters). The
throughput phase runs on one throwaway redis-server first, then every phase
runs on the cluster, the node on a cluster client; the report puts the two
side by side: turns/s, Redis CPU per turn (summed over the masters), each
master's share of the Redis CPU and the partitions it serves, one Redis's
ceiling, and the cluster's projected ceiling: N masters' cores at the
cluster's CPU per turn, and, more cautious, what it serves until its busiest
master's core is full. With --aof, every server runs with its append-only
file. CPU time charges each master what its sockets cost the kernel and
what the other servers evicted from the caches, which on a machine with
fewer cores than servers weighs against the cluster: the Go benchmark
BenchmarkTurnRedisInstructions (store) counts the instructions instead.

Flags:
`

// runBench runs `brain bench` and returns the exit code.
func runBench(ctx context.Context, args []string, log *zap.Logger, stdout, stderr io.Writer) int {
	cfg := bench.DefaultConfig()
	fs := flag.NewFlagSet("brain bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.RedisURL, "redis", "", "measure this Redis (redis://[user:password@]host:port/db; its database must be empty) instead of a throwaway redis-server")
	fs.BoolVar(&cfg.AppendOnly, "aof", false, "run the throwaway redis-server with its append-only file on (appendfsync everysec), as a Redis that must survive its own crash")
	fs.IntVar(&cfg.Processes, "processes", cfg.Processes, "processes of the throughput phase")
	fs.IntVar(&cfg.Messages, "messages", cfg.Messages, "messages posted to each process in the throughput phase")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "turns the node runs at once")
	fs.IntVar(&cfg.Rate, "rate", cfg.Rate, "messages per second offered in the wake latency phase")
	fs.DurationVar(&cfg.Quiet, "quiet", cfg.Quiet, "how long the quiet phase watches Redis's CPU (0 skips it)")
	fs.IntVar(&cfg.Idle, "idle", cfg.Idle, "BLOCKED processes of the idle phase (0 skips it)")
	fs.IntVar(&cfg.Cluster, "cluster", 0, "measure a Redis Cluster of `N` masters against one Redis: started for the run, or the one --redis redis+cluster:// names")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the throughput phase to this file (go tool pprof)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	clusterSet := false
	fs.Visit(func(f *flag.Flag) { clusterSet = clusterSet || f.Name == "cluster" })
	if clusterSet && cfg.Cluster < 1 {
		fmt.Fprintf(stderr, "brain bench: --cluster %d: want the number of masters of the cluster to measure, from 1 to %d; "+
			"leave --cluster out to measure one Redis\n", cfg.Cluster, store.DefaultPartitions)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "brain bench: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	tuneGC(os.Getenv) // measure what serve runs with
	err := bench.Run(ctx, cfg, stdout, log)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, bench.ErrInvalidConfig):
		fmt.Fprintf(stderr, "brain %v\n", err) // "brain bench: invalid config: ..."
		return 2
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "brain bench: interrupted")
		return 1
	default:
		fmt.Fprintf(stderr, "brain %v\n", err)
		return 1
	}
}
