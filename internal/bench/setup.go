package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/tools"
)

// recipe is the recipe every process runs: the built-in default, which has
// respond and tell_user.
const recipe = "default"

// sender is who the bench's messages are from.
const sender = "user:bench"

// bench holds what the phases share: the target, the scripted model, and
// the front end that creates processes and posts messages.
type bench struct {
	cfg   Config
	tgt   *target
	log   *zap.Logger
	model llm.Model
	// admins read INFO and flush, one client per server of the target
	// (tgt.servers); their commands are not the node's.
	admins []*redis.Client
	// front is a node that is never started: it creates processes and
	// posts messages on its own client, as an API server would, so that
	// the round trips counted on a measured node's client are its turns'.
	front      *brain.Node
	frontRDB   redis.UniversalClient
	frontTrips *roundTrips
}

func newBench(cfg Config, tgt *target, log *zap.Logger) (*bench, error) {
	model, err := turnModel()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	b := &bench{cfg: cfg, tgt: tgt, log: log, model: model, admins: tgt.admins(), frontRDB: tgt.client(), frontTrips: &roundTrips{}}
	b.frontRDB.AddHook(b.frontTrips)
	b.front, err = brain.New(brain.Config{Redis: b.frontRDB, NodeID: "bench-front", Models: b.models(), Logger: log})
	if err != nil {
		b.close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	return b, nil
}

func (b *bench) close() {
	closeAll(b.admins)
	_ = b.frontRDB.Close()
}

func (b *bench) models() map[string]llm.Model { return map[string]llm.Model{"default": b.model} }

// turnModel is a zero-latency model whose every turn is one tool round
// (tell_user) and then respond, awaiting the user: each turn ends BLOCKED.
func turnModel() (llm.Model, error) {
	s := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: tools.TellUser, Args: map[string]any{"message": "Working on it."}}}},
		{Calls: []scripted.Call{{Name: tools.Respond, Args: map[string]any{"message": "Done.", "awaiting_user_input": true}}}},
	}}}}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return scripted.New(s).WithoutRecording(), nil
}

// measured is a started node under measurement.
type measured struct {
	node  *brain.Node
	trips *roundTrips
	rdb   redis.UniversalClient
}

// startNode starts a node named name on its own client, counting that
// client's round trips, with tr following its commits. historyCache is
// the node's HistoryCache (0: its default).
func (b *bench) startNode(ctx context.Context, name string, tr *tracker, historyCache int) (*measured, error) {
	m := &measured{trips: &roundTrips{}, rdb: b.tgt.client()}
	m.rdb.AddHook(m.trips)
	node, err := brain.New(brain.Config{
		Redis:        m.rdb,
		NodeID:       name,
		Concurrency:  b.cfg.Concurrency,
		HistoryCache: historyCache,
		Models:       b.models(),
		Logger:       b.log,
		OnCommit:     tr.onCommit,
	})
	if err == nil {
		err = node.Start(ctx)
	}
	if err != nil {
		_ = m.rdb.Close()
		return nil, fmt.Errorf("bench: node %s: %w", name, err)
	}
	m.node = node
	return m, nil
}

// stop stops the node and closes its client.
func (m *measured) stop(ctx context.Context) {
	_ = m.node.Stop(context.WithoutCancel(ctx))
	_ = m.rdb.Close()
}

// between empties the servers between phases when the run owns them.
func (b *bench) between(ctx context.Context) error {
	if !b.tgt.mayFlush() {
		return nil
	}
	for i, admin := range b.admins {
		if err := admin.FlushDB(ctx).Err(); err != nil {
			return fmt.Errorf("bench: FLUSHDB between phases on %s: %w", b.tgt.servers[i], err)
		}
	}
	return nil
}

// serverCPU returns the CPU time each server has used (INFO cpu), in the
// order of tgt.servers.
func (b *bench) serverCPU(ctx context.Context) ([]time.Duration, error) {
	out := make([]time.Duration, len(b.admins))
	for i, admin := range b.admins {
		cpu, err := redisinfo.ServerCPU(ctx, admin)
		if err != nil {
			return nil, b.onServer(i, err)
		}
		out[i] = cpu
	}
	return out, nil
}

// commandStats returns what the servers have run so far (INFO
// commandstats), summed.
func (b *bench) commandStats(ctx context.Context) (redisinfo.Commands, error) {
	var sum redisinfo.Commands
	for i, admin := range b.admins {
		c, err := redisinfo.CommandStats(ctx, admin)
		if err != nil {
			return sum, b.onServer(i, err)
		}
		sum.Calls += c.Calls
		sum.Scripts += c.Scripts
	}
	return sum, nil
}

// usedMemory returns the memory the servers use (INFO memory
// used_memory), summed.
func (b *bench) usedMemory(ctx context.Context) (int64, error) {
	var sum int64
	for i, admin := range b.admins {
		n, err := redisinfo.UsedMemory(ctx, admin)
		if err != nil {
			return 0, b.onServer(i, err)
		}
		sum += n
	}
	return sum, nil
}

// onServer says which server err is from, on a cluster.
func (b *bench) onServer(i int, err error) error {
	if !b.tgt.isCluster() {
		return err
	}
	return fmt.Errorf("master %s: %w", b.tgt.servers[i], err)
}

// header writes what the figures are from; one, when not nil, is the
// server the cluster is compared with.
func (b *bench) header(rep *report, one *target) {
	rep.title("brain bench")
	rep.line("go", fmt.Sprintf("%s %s/%s, %d CPUs, GOMAXPROCS %d, GOGC %s", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), runtime.GOMAXPROCS(0), gcPercent()), "")
	rep.line("redis", b.tgt.describe(), "")
	rep.line("redis persistence", b.tgt.persistence, "a node's crash loses nothing either way; a Redis crash loses what is not on its disk")
	if one != nil {
		rep.line("one redis", fmt.Sprintf("throwaway redis-server %s on %s", orUnknown(one.version), one.servers[0]),
			"started for this run: the throughput phase runs on it too, to compare")
		rep.line("one redis persistence", one.persistence, "")
	}
	rep.line("model", "scripted, zero latency: tell_user, then respond (awaiting the user)", "")
	rep.line("recipe", recipe, "")
	if b.tgt.kind == embedded {
		rep.banner("NOTE: no redis-server binary was found, so these figures are from the embedded miniredis.",
			"They are NOT representative of Redis. Install redis-server (apt-get install -y redis-server)",
			"or pass --redis redis://host:port/db (an empty database).")
	}
}

// footer repeats the embedded note, where a reader of the figures looks.
func (b *bench) footer(rep *report) {
	if b.tgt.kind == embedded {
		rep.banner("NOTE: embedded miniredis: the figures above are NOT representative of Redis.")
	}
}
