package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engine-brain/brain"
)

// parallel calls fn(ctx, i) for every i in [0, n) from workers goroutines,
// in about the order of i, and returns the first error (after which the
// others stop taking work).
func parallel(ctx context.Context, n, workers int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// createBlocked creates n processes of the recipe without input (BLOCKED)
// through the front end, and hands each id to got when it is not nil.
func (b *bench) createBlocked(ctx context.Context, n int, got func(i int, pid string)) error {
	err := parallel(ctx, n, b.cfg.Posters, func(ctx context.Context, i int) error {
		rec, err := b.front.Create(ctx, brain.NewProcess{Recipe: recipe, Owner: "bench"})
		if err != nil {
			return err
		}
		if got != nil {
			got(i, rec.ID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bench: create processes: %w", err)
	}
	return nil
}

// offer calls send(i) for i = 0, 1, ... at rate per second for d, paced by
// a ticker: each tick sends what is due by then, so that a late tick is
// caught up rather than lost. It returns how many it sent and how long
// that took.
func offer(ctx context.Context, rate int, d time.Duration, send func(i int) error) (int, time.Duration, error) {
	period := max(time.Second/time.Duration(rate), time.Millisecond)
	tick := time.NewTicker(period)
	defer tick.Stop()
	start := time.Now()
	total := max(int(int64(rate)*int64(d)/int64(time.Second)), 1)
	sent := 0
	for sent < total {
		select {
		case <-ctx.Done():
			return sent, time.Since(start), ctx.Err()
		case now := <-tick.C:
			due := min(int(int64(rate)*int64(now.Sub(start))/int64(time.Second)), total)
			for ; sent < due; sent++ {
				if err := send(sent); err != nil {
					return sent, time.Since(start), err
				}
			}
		}
	}
	return sent, time.Since(start), nil
}
