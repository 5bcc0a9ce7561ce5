package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// idleResult holds the figures of the idle phase.
type idleResult struct {
	create                  time.Duration
	heapBefore, heapAfter   uint64
	goroutinesBefore        int
	goroutinesAfter         int
	redisBefore, redisAfter int64
	redisErr                error
}

// idle creates Idle BLOCKED processes while a node runs, and measures what
// they cost the node (heap, goroutines) and Redis (used_memory). An idle
// process must cost the node nothing: no goroutine, no object.
func (b *bench) idle(ctx context.Context) (idleResult, error) {
	var res idleResult
	if b.cfg.Idle == 0 {
		return res, nil
	}
	tr := newTracker()
	node, err := b.startNode(ctx, "bench-idle", tr, 0)
	if err != nil {
		return res, err
	}
	defer node.stop(ctx)

	res.heapBefore = heapAfterGC()
	res.goroutinesBefore = runtime.NumGoroutine()
	var err0, err1 error
	res.redisBefore, err0 = b.usedMemory(ctx)
	start := time.Now()
	if err := b.createBlocked(ctx, b.cfg.Idle, nil); err != nil {
		return res, err
	}
	res.create = time.Since(start)
	res.heapAfter = heapAfterGC()
	res.goroutinesAfter = runtime.NumGoroutine()
	res.redisAfter, err1 = b.usedMemory(ctx)
	res.redisErr = firstErr(err0, err1)
	return res, nil
}

func (r idleResult) write(rep *report, cfg Config) {
	if cfg.Idle == 0 {
		rep.title("idle: skipped (--idle 0)")
		return
	}
	n := cfg.Idle
	rep.title(fmt.Sprintf("idle: %d BLOCKED processes (no input) created while a node runs", n))
	rep.line("created in", fmtDuration(r.create), fmt.Sprintf("%s processes/s, %d goroutines", fmtRate(n, r.create), cfg.Posters))
	growth := float64(int64(r.heapAfter)-int64(r.heapBefore)) / float64(n)
	rep.line("node heap per idle process", fmtSize(growth),
		fmt.Sprintf("HeapAlloc after runtime.GC(): %s before, %s after", fmtSize(float64(r.heapBefore)), fmtSize(float64(r.heapAfter))))
	rep.line("goroutines", fmt.Sprintf("%d -> %d", r.goroutinesBefore, r.goroutinesAfter), "runtime.NumGoroutine before and after")
	if r.redisErr != nil {
		rep.line("redis bytes per process", "n/a", r.redisErr.Error())
		return
	}
	rep.line("redis bytes per process", fmtSize(float64(r.redisAfter-r.redisBefore)/float64(n)),
		fmt.Sprintf("INFO memory used_memory: %s before, %s after", fmtSize(float64(r.redisBefore)), fmtSize(float64(r.redisAfter))))
}
