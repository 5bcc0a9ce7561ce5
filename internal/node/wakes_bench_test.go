package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

// BenchmarkTwoNodes: two nodes share 100 BLOCKED processes; each op is one
// turn (a message, a tool round and respond). With affinity, a process's
// turns stay on one node; without, a node often finds that the other ran
// the last turns and reads them before its own (read_back/op: turns that
// read their log from Redis as far as a model call is shown).
func BenchmarkTwoNodes(b *testing.B) {
	for _, wait := range []struct {
		name string
		wait time.Duration // AffinityWait: 0 takes the default
	}{{"affinity", 0}, {"none", -1}} {
		b.Run(wait.name, func(b *testing.B) {
			const processes = 100
			redisSrv := testutil.StartRedis(b)
			m := NewMetrics(prometheus.NewRegistry())
			c := nodetest.NewCommits()
			var nodes []*Node
			for _, id := range []string{"a", "b"} {
				nodes = append(nodes, startNode(b, Config{Redis: redisSrv.Client(b), NodeID: id, Concurrency: 16,
					AffinityWait: wait.wait, Metrics: m, OnCommit: c.Add,
					Models: map[string]llm.Model{"default": nodetest.Script(b, `
turns:
  - rounds:
      - calls: [{name: tell_user, args: {message: "Looking."}}]
      - calls: [{name: respond, args: {message: "Found it.", awaiting_user_input: true}}]
`)}}))
			}
			ctx := context.Background()
			pids := make([]string, processes)
			for i := range pids {
				rec, err := nodes[0].Create(ctx, NewProcess{Recipe: "default"})
				if err != nil {
					b.Fatal(err)
				}
				pids[i] = rec.ID
			}
			b.ResetTimer()
			for sent := 0; sent < b.N; {
				wave := min(processes, b.N-sent)
				for _, pid := range pids[:wave] {
					if _, err := nodes[0].Send(ctx, pid, "user:ada", "a question", ""); err != nil {
						b.Fatal(err)
					}
				}
				sent += wave
				c.Wait(b, fmt.Sprint(sent, " turns"), func(store.Record) bool { return len(c.Records()) >= sent })
			}
			b.StopTimer()
			b.ReportMetric(promtest.ToFloat64(m.histories.WithLabelValues("read_back"))/float64(b.N), "read_back/op")
		})
	}
}
