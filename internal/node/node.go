package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/mcp"
	"github.com/engine-brain/brain/tools/toolset"
)

// Node is one brain node: it takes wakes from the shared queue, runs turns,
// fires timers and takes over the processes of nodes that died.
type Node struct {
	cfg   Config
	log   *zap.Logger
	store *store.Store
	// library holds the recipes and their tool registries; replaced whole
	// by SetRecipes, so a turn sees one consistent set.
	library atomic.Pointer[library]
	// toolBuilder builds the recipes' tool registries: the built-ins and the
	// tools of their MCP servers, reached through mcp.
	toolBuilder toolset.Builder
	mcp         *mcp.Pool
	// histories keeps recent logs so that claims read only what is new.
	histories *histories
	// wakes reads the wake queue, the node's home streams first.
	wakes *wakeReader
	// bellDown is why the store's wake bell was last seen down ("" while
	// up), so that the wakes loop logs each change once (noteBell).
	bellDown string
	// tracer makes the spans of turns; models records the model calls.
	tracer trace.Tracer
	models *modelObserver
	// gauge is brain_processes, once registered (RegisterStateGauge).
	gauge atomic.Pointer[stateCollector]
	// live is the live.Sink of the node's turns: it publishes their
	// progress to Redis (live.go); watch carries the progress of watched
	// processes, from whichever node runs them, to Watch's channels
	// (watch.go).
	live  *publisher
	watch *hub

	mu      sync.Mutex
	started bool
	stopped bool
	cancel  context.CancelFunc // stops intake: wake reads, takeovers, timers
	intake  sync.WaitGroup     // the intake loops
	turns   sync.WaitGroup     // the turn workers
	slots   chan struct{}      // one per turn that may run at once
	// work carries the wakes whose turns the workers run, each in a slot
	// already taken; closed when intake has stopped.
	work chan store.Wake
	// controls carries pauses, stops and interrupts to the running turns.
	controls *controls
	// leases renews the running turns' leases until the turns are over.
	leases     *leaseKeeper
	stopLeases context.CancelFunc
	keeping    sync.WaitGroup
	// turnCtx is the parent of every turn; cancelled when Stop's grace ends.
	turnCtx    context.Context
	turnCancel context.CancelFunc
}

// New builds a node. It does not touch Redis until Start.
func New(cfg Config) (*Node, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	st, err := store.New(cfg.Redis, store.Config{Partitions: cfg.Partitions, LeaseTTL: cfg.LeaseTTL, Clock: cfg.Clock, InboxLimit: cfg.InboxLimit,
		OwnerLimit: cfg.OwnerLimit, WaitReplicas: cfg.WaitReplicas})
	if err != nil {
		return nil, fmt.Errorf("brain: %w", err)
	}
	n := &Node{
		cfg:    cfg,
		log:    cfg.Logger.Named("node").With(zap.String("node", cfg.NodeID)),
		store:  st,
		tracer: cfg.TracerProvider.Tracer(scope),
		slots:  make(chan struct{}, cfg.Concurrency),
		work:   make(chan store.Wake, cfg.Concurrency),
	}
	if n.models, err = newModelObserver(cfg); err != nil {
		return nil, fmt.Errorf("brain: %w", err)
	}
	n.histories = newHistories(cfg.HistoryCache, cfg.HistoryBytes)
	if n.wakes, err = newWakeReader(st, cfg); err != nil {
		return nil, fmt.Errorf("brain: %w", err)
	}
	n.leases = newLeaseKeeper(st, cfg.LeaseTTL, cfg.Metrics)
	n.controls = newControls()
	n.live = newPublisher(st, liveBuffer, cfg.Metrics, n.log.Named("live"))
	n.watch = newHub(st, watchBuffer, cfg.Metrics, n.log.Named("watch"))
	catalog := toolset.Builtins()
	catalog[tools.SpawnWorker] = tools.SpawnWorkerFactory(n)
	catalog[tools.ScheduleWakeup] = tools.ScheduleWakeupFactory(n)
	catalog[tools.CancelWakeup] = tools.CancelWakeupFactory(n)
	maps.Copy(catalog, cfg.Tools)
	n.mcp, err = mcp.NewPool(mcp.Config{Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("brain: %w", err)
	}
	n.toolBuilder = toolset.Builder{Catalog: catalog, MCP: n.mcp, Logger: cfg.Logger.Named("tools")}
	n.library.Store(newLibrary(cfg.Recipes, n.toolBuilder))
	return n, nil
}

// ID returns the node's id.
func (n *Node) ID() string { return n.cfg.NodeID }

// Store returns the node's store, for reading processes and their logs.
func (n *Node) Store() *store.Store { return n.store }

// Start starts the node's loops. They run until Stop.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.started {
		return errors.New("brain: node already started")
	}
	if err := n.store.CheckLayout(ctx); err != nil {
		return fmt.Errorf("brain: %w", err)
	}
	n.started = true
	intakeCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	n.cancel = cancel
	n.turnCtx, n.turnCancel = context.WithCancel(context.WithoutCancel(ctx))
	leasesCtx, stopLeases := context.WithCancel(context.WithoutCancel(ctx))
	n.stopLeases = stopLeases
	n.keeping.Go(func() { n.leases.run(leasesCtx) })
	n.keeping.Go(func() { n.listen(leasesCtx) })
	n.live.start()
	n.watch.start()
	for range n.cfg.Concurrency {
		n.turns.Go(n.runTurns)
	}
	if n.cfg.AffinityWait > 0 {
		// Known to the others before the first read (and then every third
		// of the TTL), so that wakes find their homes from the start.
		beatCtx, cancel := context.WithTimeout(intakeCtx, min(n.cfg.LeaseTTL/3, time.Second))
		err := n.beat(beatCtx)
		cancel()
		if err != nil {
			n.log.Warn("noting the node as a wake reader failed; it reads every wake stream until it can", zap.Error(err))
		}
		beaten := err == nil // the loop's first step need not beat again
		n.loop(intakeCtx, "noting the node as a wake reader", n.cfg.LeaseTTL/3, func(ctx context.Context) error {
			if beaten {
				beaten = false
				return nil
			}
			return n.beat(ctx)
		})
	}
	n.loop(intakeCtx, "wakes", 0, n.readWakes)
	n.loop(intakeCtx, "takeovers", n.cfg.LeaseTTL/2, n.takeOver)
	n.loop(intakeCtx, "trimming wake queues", time.Second, n.trimWakes)
	n.loop(intakeCtx, "timers", time.Second, n.fireTimers)
	n.loop(intakeCtx, "tending function libraries", time.Hour, n.tendLibraries)
	n.loop(intakeCtx, "holding the lease of brain_processes", n.cfg.LeaseTTL/3, n.holdGauge)
	if n.cfg.RetainFinished > 0 {
		n.loop(intakeCtx, "deleting finished processes", min(max(n.cfg.RetainFinished/4, time.Minute), time.Hour), n.deleteFinished)
	}
	n.log.Info("node started", zap.Strings("engines", n.cfg.Engines), zap.Int("concurrency", n.cfg.Concurrency))
	return nil
}

// loop runs step until ctx ends, every interval (or back to back when 0).
// A failing step is logged and retried after a short pause.
func (n *Node) loop(ctx context.Context, name string, every time.Duration, step func(context.Context) error) {
	n.intake.Go(func() {
		var tick <-chan time.Time
		if every > 0 {
			t := time.NewTicker(every)
			defer t.Stop()
			tick = t.C
		}
		for ctx.Err() == nil {
			if err := step(ctx); err != nil && ctx.Err() == nil {
				n.cfg.Metrics.redisError(err)
				n.log.Warn(name+" failed", zap.Error(err))
				if every == 0 {
					tick = time.After(time.Second)
				}
			}
			if tick != nil {
				select {
				case <-ctx.Done():
				case <-tick:
				}
				if every == 0 {
					tick = nil
				}
			}
		}
	})
}

// Stop stops intake, lets running turns finish within the grace period
// (and then cancels them: their processes are recovered by another node),
// and returns. It is safe before Start and when called twice.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	if !n.started || n.stopped {
		n.mu.Unlock()
		return nil
	}
	n.stopped = true
	n.mu.Unlock()

	n.cancel()
	n.intake.Wait()
	dropCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	n.dropGauge(dropCtx)
	cancel()
	if n.cfg.AffinityWait > 0 {
		leaveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		if err := n.wakes.leave(leaveCtx); err != nil {
			n.log.Warn("leaving the wake readers failed; until its last beat runs out, the others take the wakes of its streams only once they waited AffinityWait", zap.Error(err))
		}
		cancel()
	}
	close(n.work) // the workers finish what was handed to them and return
	done := make(chan struct{})
	go func() { n.turns.Wait(); close(done) }()
	grace := time.NewTimer(n.cfg.Grace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		n.log.Warn("grace period over: cancelling running turns")
		n.turnCancel()
		<-done
	case <-ctx.Done():
		n.turnCancel()
		<-done
	}
	n.turnCancel()
	// The turns are over: the last of their updates go out, and the
	// node's watchers' streams end.
	n.live.stop()
	n.watch.stop()
	n.store.Close()
	n.stopLeases()
	n.keeping.Wait()
	if err := n.mcp.Close(); err != nil { // stops the MCP servers' processes
		n.log.Warn("closing MCP servers failed", zap.Error(err))
	}
	n.log.Info("node stopped")
	return nil
}

// readWakes takes as many wakes as there are free slots and runs them.
func (n *Node) readWakes(ctx context.Context) error {
	free := n.acquire(ctx)
	if free == 0 {
		return nil
	}
	wakes, err := n.wakes.read(ctx, free)
	n.runWakes(ctx, free, wakes)
	n.noteBell()
	return err
}

// noteBell logs when the store's wake bell goes down (a Cluster's node then
// polls its wake streams) and when it is back.
func (n *Node) noteBell() {
	var down string
	if err := n.store.WakeBell(); err != nil {
		down = err.Error()
	}
	switch {
	case down == n.bellDown:
	case down != "":
		n.log.Warn("the node polls its wake streams, 1 to 16 ms apart, instead of waiting on the wake bell: allow its Redis user CLIENT TRACKING, CLIENT LIST and SUBSCRIBE", zap.String("error", down))
	default:
		n.log.Info("the wake bell is up again: the node waits on it instead of polling its wake streams")
	}
	n.bellDown = down
}

// beat notes the node as a reader of its engines' wakes for a lease TTL
// and updates its home streams.
func (n *Node) beat(ctx context.Context) error { return n.wakes.beat(ctx, n.cfg.LeaseTTL) }

// takeOver claims the wakes that dead nodes left pending.
func (n *Node) takeOver(ctx context.Context) error {
	free := n.acquire(ctx)
	if free == 0 {
		return nil
	}
	wakes, err := n.store.ClaimStaleWakes(ctx, n.cfg.NodeID, n.cfg.Engines, n.cfg.LeaseTTL, free)
	n.runWakes(ctx, free, wakes)
	return err
}

// trimWakes deletes the wake entries of its engines that every node is
// done with (see store.TrimWakes).
func (n *Node) trimWakes(ctx context.Context) error { return n.store.TrimWakes(ctx, n.cfg.Engines) }

// tendLibraries notes that this version's Lua library is in use and
// deletes those of versions no node has used for store.LibraryRetention.
func (n *Node) tendLibraries(ctx context.Context) error {
	retired, err := n.store.TendLibraries(ctx)
	for _, name := range retired {
		n.log.Info("deleted the Lua function library of a brain version no node has used lately",
			zap.String("library", name), zap.Duration("unused for", store.LibraryRetention))
	}
	return err
}

// deleteFinished deletes the DONE and FAILED processes that have not
// changed for RetainFinished.
func (n *Node) deleteFinished(ctx context.Context) error {
	deleted, err := n.store.DeleteFinished(ctx, n.cfg.Clock().Add(-n.cfg.RetainFinished))
	if deleted > 0 {
		n.log.Info("deleted finished processes", zap.Int("processes", deleted), zap.Duration("finished for", n.cfg.RetainFinished))
	}
	return err
}

// runWakes runs wakes with the free slots taken for them, and gives back
// the slots left over. The store may hand over a few more wakes than were
// asked for (up to one per wake stream): those wait for a slot, or, when
// intake stops, stay pending for another node to take.
func (n *Node) runWakes(ctx context.Context, free int, wakes []store.Wake) {
	for i, w := range wakes {
		if i >= free {
			select {
			case n.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
		n.startTurn(w)
	}
	n.release(free - len(wakes))
}

// acquire takes at least one free slot (waiting for it) and then every
// other free one, and returns how many it took.
func (n *Node) acquire(ctx context.Context) int {
	select {
	case n.slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	taken := 1
	for {
		select {
		case n.slots <- struct{}{}:
			taken++
		default:
			return taken
		}
	}
}

// release gives back k slots; k <= 0 gives back none.
func (n *Node) release(k int) {
	for range k {
		<-n.slots
	}
}

// startTurn hands wake w, in a slot already taken, to a turn worker. It
// never waits: the workers and work's buffer both number the slots.
func (n *Node) startTurn(w store.Wake) { n.work <- w }

// runTurns is a turn worker: it runs the turns of the wakes handed to it
// until work closes. Workers live as long as the node rather than a
// goroutine per turn, whose stack grew anew every turn (copying it was
// ~4 % of the node's CPU in brain bench).
func (n *Node) runTurns() {
	for w := range n.work {
		n.runWake(n.turnCtx, w)
		n.release(1)
	}
}
