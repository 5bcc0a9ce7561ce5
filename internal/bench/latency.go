package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// latencyResult holds the figures of the wake latency phase.
type latencyResult struct {
	offered   int
	offerTime time.Duration
	turns     int
	// sorted latencies, one per message.
	latencies []time.Duration
}

// latency creates LatencyProcesses BLOCKED processes and offers them
// messages round-robin at Rate per second for LatencyDuration. A message's
// wake latency runs from just before its Send to the start of the turn
// that drained it (its turn_start event's At).
func (b *bench) latency(ctx context.Context) (latencyResult, error) {
	var res latencyResult
	tr := newTracker()
	node, err := b.startNode(ctx, "bench-latency", tr, 0)
	if err != nil {
		return res, err
	}
	defer node.stop(ctx)
	pids := make([]string, b.cfg.LatencyProcesses)
	if err := b.createBlocked(ctx, len(pids), func(i int, pid string) { pids[i] = pid }); err != nil {
		return res, err
	}

	// Only offer's goroutine writes posted; it is read once offer is done.
	posted := make(map[string]time.Time, min(b.cfg.Rate*int(b.cfg.LatencyDuration/time.Second+1), 1<<20))
	res.offered, res.offerTime, err = offer(ctx, b.cfg.Rate, b.cfg.LatencyDuration, func(i int) error {
		pid := pids[i%len(pids)]
		at := time.Now()
		id, err := b.front.Send(ctx, pid, sender, fmt.Sprintf("message %d", i+1), "")
		if err != nil {
			return err
		}
		posted[messageKey(pid, id)] = at
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("bench: latency: post: %w", err)
	}
	done, err := tr.wait(ctx,
		func(g progress) bool { return g.drained >= len(posted) },
		func(g progress) string { return fmt.Sprintf("%d of %d messages drained", g.drained, len(posted)) })
	if err != nil {
		return res, fmt.Errorf("bench: latency: %w", err)
	}
	res.turns = done.turns
	res.latencies = make([]time.Duration, 0, len(posted))
	for key, at := range posted {
		started, ok := tr.drainedAt(key)
		if !ok {
			return res, fmt.Errorf("bench: latency: message %s was posted but no turn drained it", key)
		}
		// A claim stamps its turn_start just before its script runs, so a
		// message posted in that instant is drained by a turn that started
		// a hair before the post: that is no wait at all.
		res.latencies = append(res.latencies, max(started.Sub(at), 0))
	}
	slices.Sort(res.latencies)
	return res, nil
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 1) of
// sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(sorted))*p)) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func (r latencyResult) write(rep *report, cfg Config) {
	rep.title(fmt.Sprintf("wake latency: %d BLOCKED processes, %d messages/s offered round-robin for %s",
		cfg.LatencyProcesses, cfg.Rate, cfg.LatencyDuration))
	rep.line("messages", fmtCount(len(r.latencies)), fmt.Sprintf("offered at %s/s, in %d turns", fmtRate(r.offered, r.offerTime), r.turns))
	if len(r.latencies) == 0 {
		return
	}
	note := "from Send to the turn_start of the turn that drained the message"
	for _, q := range []struct {
		label string
		p     float64
	}{{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}, {"max", 1}} {
		rep.line(q.label, fmtDuration(percentile(r.latencies, q.p)), note)
		note = ""
	}
}
