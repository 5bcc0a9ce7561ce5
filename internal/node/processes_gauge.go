package node

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// gaugeLease names the lease of the node that publishes brain_processes.
const gaugeLease = "processes_gauge"

// stateCollector reports the processes in each state, read from the
// store's state index when /metrics is scraped. The counts are every
// node's, so only the node that holds the gauge's lease in Redis publishes
// them (the others publish nothing): sum(brain_processes) over the nodes
// is then the true count, not the count times the nodes.
type stateCollector struct {
	store  *store.Store
	desc   *prometheus.Desc
	holder string // the node's id
	ttl    time.Duration
	clock  func() time.Time
	until  atomic.Int64 // unix ns until which the node holds the lease; 0: it does not
}

// RegisterStateGauge registers brain_processes{state} on reg, read from
// Redis at each scrape while this node holds the gauge's lease, which it
// tries to take at once and then renews (or takes over) every third of
// LeaseTTL while it runs: every node may register it, and one publishes it.
func (n *Node) RegisterStateGauge(reg prometheus.Registerer) error {
	c := &stateCollector{store: n.store, holder: n.cfg.NodeID, ttl: n.cfg.LeaseTTL, clock: n.cfg.Clock,
		desc: prometheus.NewDesc("brain_processes",
			"Processes in each lifecycle state, of all nodes: only the node that holds the gauge's lease in Redis publishes it, so sum() over nodes is the true count.",
			[]string{"state"}, nil)}
	if err := reg.Register(c); err != nil {
		return err
	}
	n.gauge.Store(c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := n.holdGauge(ctx); err != nil {
		n.log.Warn("taking the lease of brain_processes failed; the node tries again while it runs", zap.Error(err))
	}
	return nil
}

// holdGauge takes or renews the gauge's lease, once the gauge is
// registered.
func (n *Node) holdGauge(ctx context.Context) error {
	c := n.gauge.Load()
	if c == nil {
		return nil
	}
	return c.hold(ctx)
}

// hold takes or renews the gauge's lease.
func (c *stateCollector) hold(ctx context.Context) error {
	start := c.clock()
	held, err := c.store.HoldLease(ctx, gaugeLease, c.holder, c.ttl)
	switch {
	case err != nil:
		return err // a lease held runs out by itself
	case held:
		c.until.Store(start.Add(c.ttl).UnixNano())
	default:
		c.until.Store(0)
	}
	return nil
}

// dropGauge gives the gauge's lease up, if the node holds it, so that
// another node publishes the gauge at its next renewal. It asks Redis
// even when the node's own reckoning says the lease ran out: that starts
// before Redis's, so the lease may live on there a little longer.
func (n *Node) dropGauge(ctx context.Context) {
	c := n.gauge.Load()
	if c == nil {
		return
	}
	c.until.Store(0)
	if err := c.store.DropLease(ctx, gaugeLease, c.holder); err != nil {
		n.log.Warn("dropping the lease of brain_processes failed; another node publishes it once the lease runs out", zap.Error(err))
	}
}

// held reports whether the node holds the gauge's lease now.
func (c *stateCollector) held() bool { return c.clock().UnixNano() < c.until.Load() }

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect publishes the counts while the node holds the lease. A node that
// does not hold it tries to take it first: a scrape does not wait for the
// next renewal to find the lease free (say, when taking it at start failed,
// or its holder stopped).
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if !c.held() && (c.hold(ctx) != nil || !c.held()) {
		return
	}
	counts, err := c.store.Counts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, st := range lifecycle.States() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[st]), string(st))
	}
}
