package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/engine-brain/brain/store"
)

// clusterFigures are what the throughput phase on a cluster says of its
// masters, against the phase on one Redis.
type clusterFigures struct {
	masters int
	// oneCPU and clusterCPU are the Redis CPU per turn: of the one server,
	// and of the cluster's masters summed (C).
	oneCPU, clusterCPU time.Duration
	// share is each master's part of the cluster's Redis CPU, from 0 to 1;
	// masterCPU its CPU per turn (c_i).
	share     []float64
	masterCPU []time.Duration
	// oneCeiling is what one Redis serves at its cost per turn, turns/s:
	// one core's worth. clusterCeiling is what the masters serve, each a
	// core, at the cluster's cost per turn (masters / C); busiestCeiling
	// is what they serve before the busiest is saturated (1 / max c_i).
	oneCeiling, clusterCeiling, busiestCeiling float64
}

// compareCluster computes the figures from the two throughput phases; it
// fails when either has no Redis CPU figures or no turn.
func compareCluster(one, clus throughputResult) (clusterFigures, error) {
	switch {
	case one.redisErr != nil:
		return clusterFigures{}, fmt.Errorf("one redis-server: %w", one.redisErr)
	case clus.redisErr != nil:
		return clusterFigures{}, fmt.Errorf("the cluster: %w", clus.redisErr)
	case one.turns == 0 || clus.turns == 0 || one.redisCPU <= 0 || clus.redisCPU <= 0:
		return clusterFigures{}, fmt.Errorf("no turn or no Redis CPU measured (%d turns, %s on one server; %d turns, %s on the cluster)",
			one.turns, one.redisCPU, clus.turns, clus.redisCPU)
	}
	f := clusterFigures{
		masters:    len(clus.serverCPU),
		oneCPU:     one.redisCPU / time.Duration(one.turns),
		clusterCPU: clus.redisCPU / time.Duration(clus.turns),
		oneCeiling: float64(one.turns) / one.redisCPU.Seconds(),
	}
	for _, cpu := range clus.serverCPU {
		f.share = append(f.share, cpu.Seconds()/clus.redisCPU.Seconds())
		f.masterCPU = append(f.masterCPU, cpu/time.Duration(clus.turns))
	}
	f.clusterCeiling = float64(f.masters) * float64(clus.turns) / clus.redisCPU.Seconds()
	f.busiestCeiling = float64(clus.turns) / slices.Max(clus.serverCPU).Seconds()
	return f, nil
}

// writeComparison writes how the cluster's throughput phase compares with
// one Redis's: turns/s, Redis CPU per turn, each master's share of the
// Redis CPU and of the partitions, and the ceilings. It reports; it never
// judges.
func writeComparison(rep *report, cfg Config, one, clus throughputResult, tgt *target, load string) {
	n := len(tgt.servers)
	rep.title(fmt.Sprintf("the redis cluster of %d masters against one redis-server, %s", n, load))
	rep.line("turns/s, one redis", fmtRate(one.turns, one.wall), "")
	rep.line("turns/s, cluster", fmtRate(clus.turns, clus.wall), "one node: what it runs, not what the cluster serves")
	partitions := make([]int, n)
	for _, s := range tgt.partitionServer {
		partitions[s]++
	}
	f, err := compareCluster(one, clus)
	if err != nil {
		for _, label := range []string{"redis CPU per turn, one redis", "redis CPU per turn, cluster"} {
			rep.line(label, "n/a", err.Error())
		}
		for i := range n {
			rep.line(fmt.Sprintf("master %d share of redis CPU", i+1), "n/a", tgt.servers[i])
			rep.line(fmt.Sprintf("master %d partitions", i+1), fmtCount(partitions[i]), fmt.Sprintf("of %d", store.DefaultPartitions))
		}
		for _, label := range []string{"redis ceiling, one redis", "cluster ceiling, turns/s", "cluster ceiling / one redis",
			"busiest-master ceiling", "busiest-master / one redis"} {
			rep.line(label, "n/a", err.Error())
		}
		return
	}
	rep.line("redis CPU per turn, one redis", fmtDuration(f.oneCPU), "INFO cpu, posts included")
	rep.line("redis CPU per turn, cluster", fmtDuration(f.clusterCPU), fmt.Sprintf("INFO cpu, summed over the %d masters (C)", n))
	for i := range n {
		rep.line(fmt.Sprintf("master %d share of redis CPU", i+1), fmt.Sprintf("%.1f %%", 100*f.share[i]),
			fmt.Sprintf("%s: %s per turn; %d of the %d processes", tgt.servers[i], fmtDuration(f.masterCPU[i]), clus.processes[i], cfg.Processes))
		rep.line(fmt.Sprintf("master %d partitions", i+1), fmtCount(partitions[i]),
			fmt.Sprintf("of %d: the slots of their hash tags (CLUSTER KEYSLOT)", store.DefaultPartitions))
	}
	rep.line("redis ceiling, one redis", fmt.Sprintf("%.1f", f.oneCeiling), "turns/s: one Redis core's worth at its cost per turn")
	rep.line("cluster ceiling, turns/s", fmt.Sprintf("%.1f", f.clusterCeiling),
		fmt.Sprintf("%d masters' cores at the cluster's cost per turn: %d / C", n, n))
	rep.line("cluster ceiling / one redis", fmt.Sprintf("%.2f×", f.clusterCeiling/f.oneCeiling), "")
	rep.line("busiest-master ceiling", fmt.Sprintf("%.1f", f.busiestCeiling),
		"turns/s until the busiest master's core is full: 1 / its CPU per turn")
	rep.line("busiest-master / one redis", fmt.Sprintf("%.2f×", f.busiestCeiling/f.oneCeiling), "")
	// A turn drains every message waiting when it starts, and the two runs
	// need not batch alike (a wake found by polling lets more wait): per
	// message, what a deployment is asked to serve, the costs compare.
	msgs := float64(cfg.Processes * cfg.Messages)
	rep.line("messages per turn, one redis", fmt.Sprintf("%.2f", msgs/float64(max(one.turns, 1))), "")
	rep.line("messages per turn, cluster", fmt.Sprintf("%.2f", msgs/float64(max(clus.turns, 1))), "")
	oneMsg, clusMsg := one.redisCPU.Seconds()/msgs, clus.redisCPU.Seconds()/msgs
	if oneMsg > 0 && clusMsg > 0 {
		rep.line("ceiling msgs/s, one redis", fmt.Sprintf("%.1f", 1/oneMsg), "one core at its Redis CPU per message")
		rep.line("ceiling msgs/s, cluster", fmt.Sprintf("%.1f", float64(n)/clusMsg),
			fmt.Sprintf("%d masters' cores at the cluster's Redis CPU per message", n))
		rep.line("cluster / one, per message", fmt.Sprintf("%.2f×", float64(n)*oneMsg/clusMsg), "")
	}
}
