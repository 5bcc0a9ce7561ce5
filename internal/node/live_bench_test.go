package node

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/store"
)

// BenchmarkPublisher: what a live update costs its node. Each op is one
// update: its Publish, and its share of the batch it goes out in (the
// coalescing, the JSON, the pipeline to a real Redis), batches of
// "batch" updates, flushed in the benchmark's goroutine rather than the
// sender's so that nothing is dropped and nothing left out. Text deltas
// that continue one another join into one message per batch; tool updates
// are a message each (msgs/op: messages sent per update).
func BenchmarkPublisher(b *testing.B) {
	st, err := store.New(testutil.Redis(b), store.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"deltas", "tools"} {
		for _, batch := range []int{1, 16, 256} {
			b.Run(fmt.Sprintf("%s/batch=%d", kind, batch), func(b *testing.B) {
				m := NewMetrics(prometheus.NewRegistry())
				p := newPublisher(st, batch, m, zap.NewNop())
				p.running = true // no sender: flushed below
				spare := make([]live.Update, 0, batch)
				ctx := context.Background()
				u := live.Update{Process: "p_bench", Turn: "t1", Round: 1, Kind: live.Text, At: liveT0, Delta: "word ", User: true}
				if kind == "tools" {
					u = live.Update{Process: "p_bench", Turn: "t1", Round: 1, Kind: live.ToolFinished, At: liveT0, Tool: "http_fetch", CallID: "call_1"}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					p.Publish(u)
					u.Offset += len(u.Delta)
					if (i+1)%batch == 0 || i == b.N-1 {
						spare = p.flush(ctx, spare)
					}
				}
				b.StopTimer()
				if dropped := promtest.ToFloat64(m.liveOutcomes[liveDropped]); dropped > 0 {
					b.Fatalf("%v updates dropped", dropped)
				}
				b.ReportMetric(promtest.ToFloat64(m.liveOutcomes[livePublished])/float64(b.N), "msgs/op")
			})
		}
	}
}
