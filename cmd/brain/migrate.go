package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/store"
)

const migrateUsage = `Usage: brain migrate --redis URL [--partitions N]

Moves the data of a brain from before partitions (every key brain:{PID}:...,
one global index of each kind) into the partitioned layout this brain
reads, on the Redis --redis names: every process keeps its record, log,
inbox, timers, workers and approvals; the indexes are rebuilt; a process
that waited on the wake queue, or whose turn a node's stop cut short, is
woken once a node runs. Stop every node first: it refuses while one beats
or a lease is held. Each process moves in one step, so a migration stopped
midway is run again to finish; nodes refuse to start until it has.

Flags:
`

// runMigrate runs `brain migrate` and returns the exit code.
func runMigrate(ctx context.Context, args []string, log *zap.Logger, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("brain migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	redisURL := fs.String("redis", "", "the Redis to migrate: redis://[user:password@]host:port/db, or a Sentinel URL as serve takes it")
	partitions := fs.Int("partitions", store.DefaultPartitions, fmt.Sprintf("the number of partitions of the deployment, as serve will be given it (a power of two up to %d)", store.MaxPartitions))
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), migrateUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "brain migrate: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	case *redisURL == "" || *redisURL == embeddedRedis:
		fmt.Fprintln(stderr, "brain migrate: --redis: name the Redis to migrate, e.g. --redis redis://localhost:6379/0")
		return 2
	}
	if _, err := parseRedisURL(*redisURL); err != nil {
		fmt.Fprintf(stderr, "brain migrate: --redis: %v\n", err)
		return 2
	}
	if err := store.CheckPartitions(*partitions); err != nil {
		fmt.Fprintf(stderr, "brain migrate: Partitions: %v; give --partitions the number serve is given\n", err)
		return 2
	}
	rdb, release, err := openRedis(ctx, *redisURL, log)
	if err != nil {
		fmt.Fprintf(stderr, "brain migrate: %v\n", err)
		return 1
	}
	defer release()
	st, err := store.New(rdb, store.Config{Partitions: *partitions})
	if err != nil {
		fmt.Fprintf(stderr, "brain migrate: %v\n", err)
		return 2
	}
	moved := 0
	done, err := st.Migrate(ctx, func(string) {
		if moved++; moved%1000 == 0 {
			fmt.Fprintf(stdout, "moved %d processes...\n", moved)
		}
	})
	if err != nil {
		fmt.Fprintf(stderr, "brain migrate: %v (moved %d processes before that; run it again to go on)\n", err, done.Processes)
		return 1
	}
	fmt.Fprintf(stdout, "moved %d processes into %d partitions; deleted %d keys of the old layout's indexes and wake queues\n",
		done.Processes, *partitions, done.Deleted)
	return 0
}
