package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/engine-brain/brain/internal/ctxtime"
)

// quietSettle is how long the quiet phase lets a node's start-up pass
// before it watches.
const quietSettle = time.Second

// quietResult holds the figures of the quiet phase: the Redis CPU time of
// the servers, summed, over Config.Quiet.
type quietResult struct {
	alone, withNode time.Duration
	err             error
}

// quiet measures what an idle node costs Redis a second: its reads of the
// wake streams, beats, renewals and timer checks, against what Redis
// spends by itself (serverCron; a cluster's gossip) over as long.
func (b *bench) quiet(ctx context.Context) (quietResult, error) {
	var res quietResult
	if b.cfg.Quiet == 0 {
		return res, nil
	}
	alone, err := b.spentOver(ctx, b.cfg.Quiet)
	if err != nil {
		res.err = err
		return res, nil
	}
	node, err := b.startNode(ctx, "bench-quiet", newTracker(), 0)
	if err != nil {
		return res, err
	}
	defer node.stop(ctx)
	if err := ctxtime.Sleep(ctx, min(quietSettle, b.cfg.Quiet)); err != nil {
		return res, err
	}
	withNode, err := b.spentOver(ctx, b.cfg.Quiet)
	res.alone, res.withNode, res.err = alone, withNode, err
	return res, nil
}

// spentOver returns the Redis CPU time the servers spend, summed, over d.
func (b *bench) spentOver(ctx context.Context, d time.Duration) (time.Duration, error) {
	before, err := b.serverCPU(ctx)
	if err != nil {
		return 0, err
	}
	if err := ctxtime.Sleep(ctx, d); err != nil {
		return 0, err
	}
	after, err := b.serverCPU(ctx)
	if err != nil {
		return 0, err
	}
	var spent time.Duration
	for i := range after {
		spent += after[i] - before[i]
	}
	return spent, nil
}

func (r quietResult) write(rep *report, cfg Config, servers int) {
	if cfg.Quiet == 0 {
		rep.title("quiet: skipped (--quiet 0)")
		return
	}
	rep.title(fmt.Sprintf("quiet: what a node with nothing to do costs Redis, over %s", cfg.Quiet))
	what := "the server's INFO cpu"
	if servers > 1 {
		what = fmt.Sprintf("INFO cpu summed over the %d masters", servers)
	}
	if r.err != nil {
		rep.line("redis CPU, no node", "n/a", r.err.Error())
		rep.line("redis CPU, one idle node", "n/a", r.err.Error())
		return
	}
	perSecond := func(d time.Duration) string {
		return fmt.Sprintf("%.1f ms/s", float64(d.Microseconds())/1e3/cfg.Quiet.Seconds())
	}
	rep.line("redis CPU, no node", perSecond(r.alone), what+": Redis by itself (serverCron, a cluster's gossip)")
	rep.line("redis CPU, one idle node", perSecond(r.withNode),
		fmt.Sprintf("%s; the node's part, %s: its wake reads, beats, lease renewals and timer checks", what, perSecond(max(r.withNode-r.alone, 0))))
}
