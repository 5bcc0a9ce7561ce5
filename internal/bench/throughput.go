package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// throughputResult holds the figures of the throughput phase and the
// memory after it.
type throughputResult struct {
	turns      int
	wall       time.Duration
	commands   redisinfo.Commands // what the server ran in the phase; see commandErr
	commandErr error
	nodeTrips  int64         // round trips of the node's client
	frontTrips int64         // round trips of the posters' client
	redisCPU   time.Duration // every server's, summed
	redisErr   error
	// serverCPU is each server's CPU time in the phase, in the order of
	// the target's servers; processes is how many of the phase's
	// processes each serves (its partition's master).
	serverCPU []time.Duration
	processes []int
	benchCPU  time.Duration // this process: node, posters and tracker
	benchOK   bool
	heap      uint64
	rss       uint64
	rssOK     bool
}

// throughput creates Processes BLOCKED processes, posts Messages messages
// to each as fast as Posters goroutines can, and waits until every message
// is drained and every process is BLOCKED again. The node keeps the logs
// of historyCache processes (0: its default); profile, when set, receives
// a CPU profile of the phase.
func (b *bench) throughput(ctx context.Context, historyCache int, profile string) (throughputResult, error) {
	return b.load(ctx, historyCache, profile, false)
}

// paced is throughput with one message in flight per process: each
// process's next message is posted once its last was drained, so every
// turn drains one message, however quickly a node finds its wakes. Two
// deployments compare per turn at the same batching then.
func (b *bench) paced(ctx context.Context) (throughputResult, error) {
	return b.load(ctx, 0, "", true)
}

// load is throughput, paced or not.
func (b *bench) load(ctx context.Context, historyCache int, profile string, paced bool) (throughputResult, error) {
	var res throughputResult
	p, m := b.cfg.Processes, b.cfg.Messages
	tr := newTracker()
	node, err := b.startNode(ctx, "bench-throughput", tr, historyCache)
	if err != nil {
		return res, err
	}
	defer node.stop(ctx)
	pids := make([]string, p)
	if err := b.createBlocked(ctx, p, func(i int, pid string) { pids[i] = pid }); err != nil {
		return res, err
	}

	cmds0, err0 := b.commandStats(ctx)
	node0, front0 := node.trips.load(), b.frontTrips.load()
	redis0, rerr0 := b.serverCPU(ctx)
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return res, err
	}
	defer func() { _ = stopProfile() }() // on the error paths
	cpu0, ok0 := processCPU()
	start := time.Now()
	total := p * m
	if paced {
		err = parallel(ctx, p, p, func(ctx context.Context, i int) error {
			for k := range m {
				id, err := b.front.Send(ctx, pids[i], sender, fmt.Sprintf("message %d of %d", k+1, m), "")
				if err != nil {
					return err
				}
				if err := tr.awaitDrained(ctx, messageKey(pids[i], id)); err != nil {
					return err
				}
			}
			return nil
		})
	} else {
		err = parallel(ctx, total, b.cfg.Posters, func(ctx context.Context, i int) error {
			_, err := b.front.Send(ctx, pids[i%p], sender, fmt.Sprintf("message %d of %d", i/p+1, m), "")
			return err
		})
	}
	if err != nil {
		return res, fmt.Errorf("bench: throughput: post: %w", err)
	}
	done, err := tr.wait(ctx,
		func(g progress) bool { return g.drained >= total && g.blocked == p },
		func(g progress) string {
			return fmt.Sprintf("%d of %d messages drained, %d of %d processes BLOCKED", g.drained, total, g.blocked, p)
		})
	if err != nil {
		return res, fmt.Errorf("bench: throughput: %w", err)
	}
	res.wall = time.Since(start)
	cpu1, ok1 := processCPU()
	if err := stopProfile(); err != nil {
		return res, err
	}
	redis1, rerr1 := b.serverCPU(ctx)
	res.benchCPU, res.benchOK = cpu1-cpu0, ok0 && ok1
	if res.redisErr = firstErr(rerr0, rerr1); res.redisErr == nil {
		res.serverCPU = make([]time.Duration, len(redis1))
		for i := range redis1 {
			res.serverCPU[i] = redis1[i] - redis0[i]
			res.redisCPU += res.serverCPU[i]
		}
	}
	res.turns = done.turns
	res.nodeTrips = node.trips.load() - node0
	res.frontTrips = b.frontTrips.load() - front0
	cmds1, err1 := b.commandStats(ctx)
	res.commands = redisinfo.Commands{Calls: cmds1.Calls - cmds0.Calls, Scripts: cmds1.Scripts - cmds0.Scripts}
	res.commandErr = firstErr(err0, err1)

	if err := b.checkSettled(ctx, pids); err != nil {
		return res, fmt.Errorf("bench: throughput: %w", err)
	}
	if b.tgt.isCluster() {
		res.processes = make([]int, len(b.tgt.servers))
		for _, pid := range pids {
			res.processes[b.tgt.partitionServer[store.Partition(store.DefaultPartitions, pid)]]++
		}
	}
	tr.forget()
	res.heap = heapAfterGC()
	res.rss, res.rssOK = residentSet()
	return res, nil
}

// checkSettled checks, in Redis, that every process is BLOCKED with an
// empty inbox.
func (b *bench) checkSettled(ctx context.Context, pids []string) error {
	st := b.front.Store()
	return parallel(ctx, len(pids), b.cfg.Posters, func(ctx context.Context, i int) error {
		rec, err := st.Get(ctx, pids[i])
		if err != nil {
			return err
		}
		if rec.Status.State != lifecycle.Blocked {
			return fmt.Errorf("process %s is %s after its last turn, want BLOCKED", rec.ID, rec.Status)
		}
		inbox, err := st.Inbox(ctx, pids[i])
		if err != nil {
			return err
		}
		if len(inbox) > 0 {
			return fmt.Errorf("process %s still has %d messages in its inbox", rec.ID, len(inbox))
		}
		return nil
	})
}

// smallCache is the history cache of the second throughput run: half the
// processes, so a claim finds its kept log about half the time, and kept
// logs are evicted all the time, some while their turn starts.
func smallCache(cfg Config) int { return max(1, cfg.Processes/2) }

// writeSmallCache writes the figures of the throughput run whose node keeps
// the logs of only smallCache processes.
func (r throughputResult) writeSmallCache(rep *report, cfg Config) {
	turns := time.Duration(max(r.turns, 1))
	rep.title(fmt.Sprintf("throughput again, the node keeping the logs of %d of the %d processes (HistoryCache)",
		smallCache(cfg), cfg.Processes))
	rep.line("turns/s, small cache", fmtRate(r.turns, r.wall), "a claim that finds no kept log reads it back (whole, at this length)")
	if r.redisErr != nil {
		rep.line("redis CPU/turn, small cache", "n/a", r.redisErr.Error())
	} else {
		rep.line("redis CPU/turn, small cache", fmtDuration(r.redisCPU/turns), "")
	}
	if r.benchOK {
		rep.line("node CPU/turn, small cache", fmtDuration(r.benchCPU/turns), "")
	} else {
		rep.line("node CPU/turn, small cache", "n/a", "no getrusage here")
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// write writes the figures of the throughput phase and the memory after
// it.
func (r throughputResult) write(rep *report, cfg Config) {
	r.writeThroughput(rep, cfg, "throughput")
	r.writeMemory(rep)
}

// writeThroughput writes the figures of the throughput phase in a section
// titled name.
func (r throughputResult) writeThroughput(rep *report, cfg Config, name string) {
	msgs := cfg.Processes * cfg.Messages
	rep.title(fmt.Sprintf("%s: %d BLOCKED processes × %d messages, node concurrency %d, %d posting goroutines",
		name, cfg.Processes, cfg.Messages, cfg.Concurrency, cfg.Posters))
	rep.line("messages posted and drained", fmtCount(msgs), "")
	rep.line("turns", fmtCount(r.turns), "a turn drains every message waiting when it starts")
	rep.line("wall time", fmtDuration(r.wall), "first post to last process BLOCKED with an empty inbox")
	rep.line("turns/s", fmtRate(r.turns, r.wall), "")
	rep.line("messages/s", fmtRate(msgs, r.wall), "")
	if r.commandErr != nil {
		rep.line("redis commands per turn", "n/a", r.commandErr.Error())
		rep.line("redis script time per turn", "n/a", r.commandErr.Error())
	} else {
		rep.line("redis commands per turn", fmtRatio(r.commands.Calls, int64(r.turns)),
			"INFO commandstats: every command the server ran, in scripts too, posts included")
		rep.line("redis script time per turn", fmtDuration(r.commands.Scripts/time.Duration(max(r.turns, 1))),
			"INFO commandstats: time in brain's scripts, their commands included, posts too")
	}
	rep.line("redis round trips per turn", fmtRatio(r.nodeTrips, int64(r.turns)),
		"the node's client: 1 per command, 1 per pipeline (idle polling included)")
	rep.line("redis round trips per message", fmtRatio(r.frontTrips, int64(msgs)), "the posters' client (Send)")
	if r.redisErr != nil {
		rep.line("redis CPU per turn", "n/a", r.redisErr.Error())
		rep.line("redis ceiling, turns/s", "n/a", r.redisErr.Error())
	} else {
		rep.line("redis CPU per turn", fmtDuration(r.redisCPU/time.Duration(max(r.turns, 1))),
			fmt.Sprintf("INFO cpu, posts included; %.2f cores busy", r.redisCPU.Seconds()/r.wall.Seconds()))
		// Redis runs the scripts on one thread: this is what it serves at
		// most, every node together, at this cost per turn.
		rep.line("redis ceiling, turns/s", fmtRate(r.turns, r.redisCPU),
			"one Redis core's worth of turns at that cost: the most a deployment on one Redis runs, every node together")
	}
	if r.benchOK {
		rep.line("node CPU per turn", fmtDuration(r.benchCPU/time.Duration(max(r.turns, 1))),
			fmt.Sprintf("getrusage of this process (node, posters, tracker); %.2f cores busy", r.benchCPU.Seconds()/r.wall.Seconds()))
	} else {
		rep.line("node CPU per turn", "n/a", "no getrusage here")
	}
}

// writeMemory writes the memory after the throughput phase.
func (r throughputResult) writeMemory(rep *report) {
	rep.title("memory after the throughput phase")
	rep.line("Go heap", fmtSize(float64(r.heap)), "HeapAlloc after runtime.GC(): node, bench and clients")
	if r.rssOK {
		rep.line("process RSS", fmtSize(float64(r.rss)), "VmRSS")
	} else {
		rep.line("process RSS", "n/a", "no /proc/self/status here")
	}
}
