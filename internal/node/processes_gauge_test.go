package node

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
)

// Every node registers brain_processes and one publishes it, so that its
// sum over the nodes of a Redis is the true count; when that node stops,
// another takes it over.
func TestProcessesGaugeSumsOverNodes(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	var nodes [2]*Node
	var regs [2]*prometheus.Registry
	// The first node's clock runs ahead at its stop (below).
	var ahead atomic.Int64
	clocks := [2]func() time.Time{func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }, time.Now}
	for i := range nodes {
		// No engine runs the recipes' wakes: the processes stay READY.
		nodes[i] = startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": partsModel(nil)}, Engines: []string{"worker"}, Clock: clocks[i]})
		regs[i] = prometheus.NewPedanticRegistry()
		if err := nodes[i].RegisterStateGauge(regs[i]); err != nil {
			t.Fatal(err)
		}
	}
	const processes = 3
	for range processes {
		if _, err := nodes[0].Create(context.Background(), NewProcess{Recipe: "ford", Input: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	sum := func(regs ...*prometheus.Registry) (total float64, publishers int) {
		t.Helper()
		for _, reg := range regs {
			families, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range families {
				if f.GetName() == "brain_processes" {
					publishers++
					total += gaugeSum(f.GetMetric())
				}
			}
		}
		return total, publishers
	}
	if total, publishers := sum(regs[:]...); total != processes || publishers != 1 {
		t.Errorf("sum(brain_processes) over the nodes = %v from %d nodes, want %d from one", total, publishers, processes)
	}

	// By its own reckoning the publisher's lease has run out; Redis's,
	// which started later, may not have: it must give the lease up all
	// the same.
	ahead.Store(int64(nodes[0].cfg.LeaseTTL))
	if err := nodes[0].Stop(context.Background()); err != nil { // the first to register holds the lease
		t.Fatal(err)
	}
	// The other publishes at its next scrape, before its next renewal.
	if total, publishers := sum(regs[1]); total != processes || publishers != 1 {
		t.Errorf("after the publisher stopped, the other node publishes %v (%d), want %d", total, publishers, processes)
	}
}

func gaugeSum(ms []*dto.Metric) float64 {
	total := 0.0
	for _, m := range ms {
		total += m.GetGauge().GetValue()
	}
	return total
}
