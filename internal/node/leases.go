package node

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/store"
)

// leaseKeeper renews the leases of the turns a node runs, all from one
// goroutine, instead of a goroutine and a ticker per turn: most turns end
// long before their first renewal, and those cost ~3 % of the node's CPU in
// brain bench. A lease is renewed once it is a third of the TTL old, so it
// is renewed at least twice before it could expire; a lease it fails to
// renew cancels its turn (another node recovers the process).
type leaseKeeper struct {
	store   *store.Store
	ttl     time.Duration
	metrics *Metrics

	mu   sync.Mutex
	held map[*store.Claim]*heldLease
}

// heldLease is the lease of a running turn: how to end the turn when the
// lease is lost, and when its process is no longer RUNNING (halt), and
// when the lease was taken or last renewed.
type heldLease struct {
	cancel  context.CancelFunc
	halt    func()
	log     *zap.Logger
	renewed time.Time
}

func newLeaseKeeper(st *store.Store, ttl time.Duration, m *Metrics) *leaseKeeper {
	return &leaseKeeper{store: st, ttl: ttl, metrics: m, held: make(map[*store.Claim]*heldLease)}
}

// hold keeps claim's lease until drop; cancel ends its turn if the lease is
// lost, halt if a renewal finds its process paused, stopped or failed.
func (k *leaseKeeper) hold(claim *store.Claim, cancel context.CancelFunc, halt func(), log *zap.Logger) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.held[claim] = &heldLease{cancel: cancel, halt: halt, log: log, renewed: time.Now()}
}

// drop stops keeping claim's lease: its turn has ended.
func (k *leaseKeeper) drop(claim *store.Claim) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.held, claim)
}

// run renews the leases that are due until ctx ends; it checks every sixth
// of the TTL.
func (k *leaseKeeper) run(ctx context.Context) {
	t := time.NewTicker(k.ttl / 6)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			k.renewDue(ctx, now)
		}
	}
}

// renewDue renews, at once, every lease held for a third of the TTL by now.
func (k *leaseKeeper) renewDue(ctx context.Context, now time.Time) {
	var due []*store.Claim
	k.mu.Lock()
	for c, h := range k.held {
		if now.Sub(h.renewed) >= k.ttl/3 {
			due = append(due, c)
		}
	}
	k.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range due {
		wg.Go(func() {
			running, err := k.store.RenewLease(ctx, c)
			k.metrics.redisError(err)
			k.mu.Lock()
			defer k.mu.Unlock()
			h := k.held[c]
			switch {
			case h == nil || ctx.Err() != nil:
				// The turn ended meanwhile, or the node is stopping.
			case err != nil && store.Unavailable(err) && now.Sub(h.renewed) < k.ttl:
				// Redis could not take it just now, and the lease has time
				// left: try again at the next tick (its writes are fenced
				// either way).
				h.log.Warn("lease renewal failed; trying again", zap.Error(err))
			case err != nil:
				h.log.Warn("lease lost", zap.Error(err))
				h.cancel()
				delete(k.held, c)
			default:
				h.renewed = now
				if !running {
					h.halt()
				}
			}
		})
	}
	wg.Wait()
}
