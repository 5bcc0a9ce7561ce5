package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/store"
)

// tiny is a configuration that runs every phase in about a second.
func tiny() Config {
	cfg := DefaultConfig()
	cfg.Processes, cfg.Messages = 3, 2
	cfg.Rate, cfg.LatencyProcesses, cfg.LatencyDuration = 50, 5, time.Second
	cfg.Quiet = 100 * time.Millisecond
	cfg.Idle = 100
	return cfg
}

// figures are the labels of the report's figure lines.
var figures = []string{
	"messages posted and drained", "turns", "wall time", "turns/s", "messages/s",
	"redis commands per turn", "redis script time per turn", "redis round trips per turn", "redis round trips per message",
	"redis CPU per turn", "redis ceiling, turns/s", "node CPU per turn",
	"Go heap", "process RSS",
	"turns/s, small cache", "redis CPU/turn, small cache", "node CPU/turn, small cache",
	"messages", "p50", "p90", "p99", "max",
	"redis CPU, no node", "redis CPU, one idle node",
	"created in", "node heap per idle process", "goroutines", "redis bytes per process",
}

// figureValues returns the value of every figure line of a report, by label.
func figureValues(t *testing.T, report string) map[string]string {
	t.Helper()
	line := regexp.MustCompile(`^  (\S.*?)\s{2,}(\S.*?)(?:\s{2,}.*)?$`)
	got := make(map[string]string)
	for l := range strings.Lines(report) {
		if m := line.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
			got[m[1]] = m[2]
		}
	}
	return got
}

// checkFigures checks that the report has every figure, with a value
// other than n/a except for the labels in na.
func checkFigures(t *testing.T, report string, na ...string) {
	t.Helper()
	got := figureValues(t, report)
	for _, label := range figures {
		v, ok := got[label]
		switch {
		case !ok:
			t.Errorf("the report has no %q line", label)
		case v == "n/a" && !contains(na, label) && label != "process RSS":
			t.Errorf("%s: n/a", label)
		case v != "n/a" && contains(na, label):
			t.Errorf("%s: %s, want n/a", label, v)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func testLogger(t *testing.T) *zap.Logger {
	return zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
}

// TestRun runs a tiny bench on a real redis-server given as --redis, then
// runs it again: the database now holds keys, so it is refused.
func TestRun(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	cfg := tiny()
	cfg.RedisURL = "redis://" + srv.Addr + "/0"
	var out bytes.Buffer
	if err := Run(t.Context(), cfg, &out, testLogger(t)); err != nil {
		t.Fatalf("Run: %v\nreport so far:\n%s", err, out.String())
	}
	report := out.String()
	checkFigures(t, report)
	for _, want := range []string{"redis-server ", "db 0 (--redis; not flushed", "no append-only file, no snapshots", "throughput: 3 BLOCKED processes × 2 messages"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if got := figureValues(t, report)["messages"]; got != "50" {
		t.Errorf("latency messages = %s, want 50 (50/s for 1s)", got)
	}

	out.Reset()
	err := Run(t.Context(), cfg, &out, testLogger(t))
	if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "runs only on an empty database") {
		t.Errorf("second Run on the same database: %v, want ErrNotEmpty saying it must be empty", err)
	}
}

// TestRunEmbedded measures the embedded miniredis, as a machine without
// redis-server does: the figures come with the note, and what miniredis
// cannot say is n/a. It asks for a CPU profile too.
// TestThrowawayAppendOnly checks that --aof runs the throwaway server with
// its append-only file on, and that the report would say so.
func TestThrowawayAppendOnly(t *testing.T) {
	t.Parallel()
	tgt, err := openTarget(t.Context(), "", redisserver.Options{AppendOnly: true}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.close()
	if tgt.kind == embedded {
		testutil.StartRedis(t) // no redis-server binary: skips, or fails where BRAIN_REQUIRE_REDIS=1
	}
	if want := "append-only file, appendfsync everysec, no snapshots"; tgt.persistence != want {
		t.Errorf("persistence = %q, want %q", tgt.persistence, want)
	}
}

func TestRunEmbedded(t *testing.T) {
	t.Parallel()
	tgt, err := openEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.close()
	cfg := tiny()
	cfg.CPUProfile = filepath.Join(t.TempDir(), "cpu.pprof")
	var out bytes.Buffer
	if err := run(t.Context(), cfg, tgt, &out, testLogger(t)); err != nil {
		t.Fatalf("run: %v\nreport so far:\n%s", err, out.String())
	}
	prof, err := os.ReadFile(cfg.CPUProfile)
	if err != nil || !bytes.HasPrefix(prof, []byte{0x1f, 0x8b}) {
		t.Errorf("CPU profile: %d bytes, %v; want a gzipped pprof profile", len(prof), err)
	}
	report := out.String()
	checkFigures(t, report, "redis commands per turn", "redis script time per turn", "redis CPU per turn", "redis ceiling, turns/s",
		"redis CPU/turn, small cache", "redis bytes per process", "redis CPU, no node", "redis CPU, one idle node")
	if n := strings.Count(report, "NOT representative"); n != 2 {
		t.Errorf("the report says NOT representative %d times, want 2 (top and bottom):\n%s", n, report)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*Config)
		want   string // "" for valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"idle 0 skips", func(c *Config) { c.Idle = 0 }, ""},
		{"redis url", func(c *Config) { c.RedisURL = "redis://127.0.0.1:6379/3" }, ""},
		{"no processes", func(c *Config) { c.Processes = 0 }, "Processes (--processes): must be between 1 and 1000000 (got 0)"},
		{"no messages", func(c *Config) { c.Messages = 0 }, "Messages (--messages): must be between 1 and 10000 (got 0)"},
		{"no concurrency", func(c *Config) { c.Concurrency = 0 }, "Concurrency (--concurrency): must be between 1 and 10000 (got 0)"},
		{"negative rate", func(c *Config) { c.Rate = -5 }, "Rate (--rate): must be between 1 and 1000000 (got -5)"},
		{"negative idle", func(c *Config) { c.Idle = -1 }, "Idle (--idle): must be between 0 and 10000000 (got -1)"},
		{"short latency phase", func(c *Config) { c.LatencyDuration = time.Millisecond }, "LatencyDuration: must be between 100ms and 1h (got 1ms)"},
		{"bad url", func(c *Config) { c.RedisURL = "http://x" }, "RedisURL (--redis): "},
		{"aof", func(c *Config) { c.AppendOnly = true }, ""},
		{"aof of a given server", func(c *Config) { c.RedisURL, c.AppendOnly = "redis://127.0.0.1:6379/3", true }, "AppendOnly (--aof): only for the throwaway redis-server"},
		{"cluster", func(c *Config) { c.Cluster = 3 }, ""},
		{"cluster with aof", func(c *Config) { c.Cluster, c.AppendOnly = 3, true }, ""},
		{"a given cluster", func(c *Config) { c.RedisURL = "redis+cluster://127.0.0.1:7000,127.0.0.1:7001" }, ""},
		{"a given cluster of 3", func(c *Config) { c.RedisURL, c.Cluster = "redis+cluster://127.0.0.1:7000", 3 }, ""},
		{"negative cluster", func(c *Config) { c.Cluster = -1 }, "Cluster (--cluster): must be between 1 and 64 masters"},
		{"cluster of one server", func(c *Config) { c.RedisURL, c.Cluster = "redis://127.0.0.1:6379/3", 3 }, "measures a Redis Cluster, and --redis names one server"},
		{"bad cluster url", func(c *Config) { c.RedisURL = "redis+cluster://127.0.0.1:7000/1" }, "RedisURL (--redis): "},
		{"aof of a given cluster", func(c *Config) { c.RedisURL, c.AppendOnly = "redis+cluster://127.0.0.1:7000", true }, "AppendOnly (--aof): only for the throwaway"},
		{"too many messages", func(c *Config) { c.Processes, c.Messages = 1_000_000, 100 }, "Processes × Messages: must be at most 10000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			tt.change(&cfg)
			err := cfg.validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("validate: %v, want ErrInvalidConfig saying %q", err, tt.want)
			}
		})
	}
}

func TestRunRefusesInvalidConfig(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Processes = 0
	var out bytes.Buffer
	if err := Run(context.Background(), cfg, &out, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Run: %v, want ErrInvalidConfig", err)
	}
	if out.Len() > 0 {
		t.Errorf("Run wrote a report for an invalid config:\n%s", out.String())
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.5, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.9, 4 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 1, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
		}
	}
}

// TestRunCluster runs a tiny bench with --cluster 3: the throughput phase
// on one throwaway redis-server, then every phase on a throwaway cluster
// of 3 masters, and the comparison. It checks that the figures are there,
// each master's share of the Redis CPU summing to 100 % and its
// partitions to 64; never what they are.
func TestRunCluster(t *testing.T) {
	t.Parallel()
	if _, err := redisserver.Binary(); err != nil {
		testutil.StartRedis(t) // skips, or fails where BRAIN_REQUIRE_REDIS=1
	}
	cfg := tiny()
	cfg.Cluster = 3
	var out bytes.Buffer
	if err := Run(t.Context(), cfg, &out, testLogger(t)); err != nil {
		t.Fatalf("Run: %v\nreport so far:\n%s", err, out.String())
	}
	report := out.String()
	checkFigures(t, report)
	for _, want := range []string{
		"throwaway redis cluster of 3 masters, no replicas",
		"throughput on one redis-server: 3 BLOCKED processes × 2 messages",
		"throughput on the redis cluster of 3 masters: 3 BLOCKED processes × 2 messages",
		"the redis cluster of 3 masters against one redis-server, the same load",
		"the redis cluster of 3 masters against one redis-server, paced: one message in flight per process",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// Paced, every turn drains one message, on both (the last figures of
	// the label are the paced section's).
	paced := report[strings.Index(report, "paced: one message"):]
	for _, label := range []string{"messages per turn, one redis", "messages per turn, cluster"} {
		if v := figureValues(t, paced)[label]; v != "1.00" {
			t.Errorf("paced, %s: %q, want 1.00", label, v)
		}
	}
	got := figureValues(t, report)
	number := func(label, suffix string) float64 {
		t.Helper()
		v, ok := got[label]
		if !ok {
			t.Errorf("the report has no %q line", label)
			return 0
		}
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, suffix), 64)
		if err != nil || !strings.HasSuffix(v, suffix) {
			t.Errorf("%s: %q, want a number ending in %q", label, v, suffix)
		}
		return f
	}
	for _, label := range []string{"turns/s, one redis", "turns/s, cluster", "redis ceiling, one redis", "cluster ceiling, turns/s", "busiest-master ceiling"} {
		if f := number(label, ""); f <= 0 {
			t.Errorf("%s: %v, want more than 0", label, f)
		}
	}
	for _, label := range []string{"cluster ceiling / one redis", "busiest-master / one redis"} {
		if f := number(label, "×"); f <= 0 {
			t.Errorf("%s: %v, want more than 0", label, f)
		}
	}
	for _, label := range []string{"redis CPU per turn, one redis", "redis CPU per turn, cluster"} {
		if _, err := time.ParseDuration(got[label]); err != nil {
			t.Errorf("%s: %q, want a duration", label, got[label])
		}
	}
	var shares float64
	var partitions int
	for i := 1; i <= 3; i++ {
		shares += number(fmt.Sprintf("master %d share of redis CPU", i), " %")
		partitions += int(number(fmt.Sprintf("master %d partitions", i), ""))
	}
	if _, ok := got["master 4 share of redis CPU"]; ok {
		t.Errorf("the report has a 4th master")
	}
	if shares < 99.5 || shares > 100.5 {
		t.Errorf("the masters' shares of the Redis CPU sum to %.1f %%, want 100 %%", shares)
	}
	if partitions != 64 {
		t.Errorf("the masters' partitions sum to %d, want 64", partitions)
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}

// TestGivenCluster points the bench at a cluster (--redis
// redis+cluster://): it maps the masters and the partitions they serve,
// and refuses a cluster of another number of masters than --cluster says,
// or one whose master holds a key, naming it.
func TestGivenCluster(t *testing.T) {
	t.Parallel()
	c, cc := testutil.RedisCluster(t, 3, 0)
	url := "redis+cluster://" + strings.Join(c.Addrs(), ",")
	tgt, err := openGivenCluster(t.Context(), url, 3)
	if err != nil {
		t.Fatal(err)
	}
	tgt.close()
	want := []string{c.Masters[0].Addr, c.Masters[1].Addr, c.Masters[2].Addr}
	if !slices.Equal(tgt.servers, want) {
		t.Errorf("servers %v, want the masters in the order of their slots %v", tgt.servers, want)
	}
	per := make([]int, 3)
	for _, s := range tgt.partitionServer {
		per[s]++
	}
	if len(tgt.partitionServer) != 64 || per[0] == 0 || per[1] == 0 || per[2] == 0 {
		t.Errorf("partitions per master %v of %d, want 64 over all 3", per, len(tgt.partitionServer))
	}
	if tgt.persistence != "no append-only file, no snapshots, every master" {
		t.Errorf("persistence %q", tgt.persistence)
	}

	cfg := tiny()
	cfg.RedisURL, cfg.Cluster = url, 2
	err = Run(t.Context(), cfg, io.Discard, testLogger(t))
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "has 3 masters") || !strings.Contains(err.Error(), "give --cluster 3") {
		t.Errorf("--cluster 2 on 3 masters: %v, want ErrInvalidConfig saying it has 3", err)
	}
	key := store.Key(64, "p", "proc")
	if err := cc.Set(t.Context(), key, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	master, err := cc.MasterForKey(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Cluster = 0
	err = Run(t.Context(), cfg, io.Discard, testLogger(t))
	if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "master "+master.Options().Addr+" of the cluster") {
		t.Errorf("a cluster holding a key: %v, want ErrNotEmpty naming master %s", err, master.Options().Addr)
	}
}
