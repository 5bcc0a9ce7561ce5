package bench

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// liveWaves is how many times the live turns phase halts a node's worth
// of running turns (Concurrency of them).
const liveWaves = 8

// liveResult holds the figures of the live turns phase.
type liveResult struct {
	// halts are sorted: each from the answer to a pause or stop of a
	// process whose model call is midway through a slow answer to the
	// commit of the halted turn on another node.
	halts []time.Duration
	calls int // model calls made: one per halted turn when no halt is missed
	// firsts are sorted: each from a model call's first token to the first
	// progress update of its turn at a watcher on another node.
	firsts []time.Duration
}

// live measures how soon a running turn's progress reaches a client on
// another node, and how soon a pause or a stop takes effect on it: waves of Concurrency processes whose model streams a long answer
// slowly; once every call streams, each process is paused or stopped (in
// turn) through the front node, as an API server on another node would,
// and the time from that call's return to the halted turn's commit on the
// measured node is taken.
func (b *bench) live(ctx context.Context) (liveResult, error) {
	var res liveResult
	model := newSlowModel()
	commits := newCommitClock()
	nodeRDB, watcherRDB := b.tgt.client(), b.tgt.client()
	defer func() { _, _ = nodeRDB.Close(), watcherRDB.Close() }() // after the nodes stop
	node, err := brain.New(brain.Config{
		Redis: nodeRDB, NodeID: "bench-live", Concurrency: b.cfg.Concurrency, Logger: b.log,
		Models: map[string]llm.Model{"default": model}, OnCommit: commits.onCommit,
	})
	if err == nil {
		err = node.Start(ctx)
	}
	if err != nil {
		return res, fmt.Errorf("bench: live turns: node: %w", err)
	}
	defer func() { _ = node.Stop(context.WithoutCancel(ctx)) }()
	// The watcher: a node that runs no chat turn, as an API server
	// elsewhere in the deployment.
	watcher, err := brain.New(brain.Config{Redis: watcherRDB, NodeID: "bench-watcher", Engines: []string{"worker"}, Logger: b.log,
		Models: b.models()})
	if err == nil {
		err = watcher.Start(ctx)
	}
	if err != nil {
		return res, fmt.Errorf("bench: live turns: watcher: %w", err)
	}
	defer func() { _ = watcher.Stop(context.WithoutCancel(ctx)) }()

	for wave := range liveWaves {
		pids := make([]string, b.cfg.Concurrency)
		seen := make([]chan time.Time, len(pids))
		watchCtx, stopWatching := context.WithCancel(ctx)
		for i := range pids {
			rec, err := b.front.Create(ctx, brain.NewProcess{Recipe: recipe, Owner: "bench"})
			if err != nil {
				stopWatching()
				return res, fmt.Errorf("bench: live turns: create: %w", err)
			}
			pids[i] = rec.ID
			if seen[i], err = firstProgress(watchCtx, watcher, rec.ID); err != nil {
				stopWatching()
				return res, fmt.Errorf("bench: live turns: watch: %w", err)
			}
			if _, err := b.front.Send(ctx, rec.ID, sender, "Write at length.", ""); err != nil {
				stopWatching()
				return res, fmt.Errorf("bench: live turns: send: %w", err)
			}
		}
		err := model.streaming(ctx, pids)
		if err == nil {
			err = res.addFirsts(ctx, model, pids, seen)
		}
		stopWatching()
		if err != nil {
			return res, fmt.Errorf("bench: live turns: wave %d: %w", wave+1, err)
		}
		asked := make(map[string]time.Time, len(pids))
		for i, pid := range pids {
			ev := lifecycle.Pause
			if i%2 == 1 {
				ev = lifecycle.Finish
			}
			if _, err := b.front.Transition(ctx, pid, ev, "operator:bench"); err != nil {
				return res, fmt.Errorf("bench: live turns: %s %s: %w", ev, pid, err)
			}
			asked[pid] = time.Now()
		}
		for pid, at := range asked {
			done, err := commits.wait(ctx, pid)
			if err != nil {
				return res, fmt.Errorf("bench: live turns: %w", err)
			}
			res.halts = append(res.halts, max(done.Sub(at), 0))
		}
	}
	res.calls = model.calls()
	slices.Sort(res.halts)
	slices.Sort(res.firsts)
	return res, nil
}

// firstProgress watches pid on node w and returns when its first text
// update arrives there.
func firstProgress(ctx context.Context, w *brain.Node, pid string) (chan time.Time, error) {
	updates, err := w.Watch(ctx, pid)
	if err != nil {
		return nil, err
	}
	first := make(chan time.Time, 1)
	go func() {
		for u := range updates {
			if u.Kind == live.Text {
				first <- time.Now()
				break
			}
		}
		for range updates { // until the watch ends
		}
	}()
	return first, nil
}

// addFirsts adds, for each process of pids, the time from its model
// call's first token to the first progress its watcher saw (seen).
func (r *liveResult) addFirsts(ctx context.Context, model *slowModel, pids []string, seen []chan time.Time) error {
	stall := time.NewTimer(stallTimeout)
	defer stall.Stop()
	for i, pid := range pids {
		select {
		case at := <-seen[i]:
			r.firsts = append(r.firsts, max(at.Sub(model.firstToken(pid)), 0))
		case <-ctx.Done():
			return ctx.Err()
		case <-stall.C:
			return fmt.Errorf("no progress of %s reached its watcher within %s", pid, stallTimeout)
		}
	}
	return nil
}

func (r liveResult) write(rep *report, cfg Config) {
	rep.title(fmt.Sprintf("live turns: %d waves of %d turns, each streaming a slow answer, paused or stopped from another node",
		liveWaves, cfg.Concurrency))
	rep.line("turns halted", fmtCount(len(r.halts)), fmt.Sprintf("%d model calls (one per turn: none after a halt)", r.calls))
	note := "from the model's first token to the first progress update at a watcher on another node"
	for _, q := range []struct {
		label string
		p     float64
	}{{"first progress p50", 0.50}, {"first progress p99", 0.99}, {"first progress max", 1}} {
		rep.line(q.label, fmtDuration(percentile(r.firsts, q.p)), note)
		note = ""
	}
	note = "from the pause's or stop's answer to the halted turn's commit"
	for _, q := range []struct {
		label string
		p     float64
	}{{"halt p50", 0.50}, {"halt p99", 0.99}, {"halt max", 1}} {
		rep.line(q.label, fmtDuration(percentile(r.halts, q.p)), note)
		note = ""
	}
}

// slowModel streams a long answer a word every slowWord, as a model
// writing a long answer does, and notes which processes' calls have begun
// streaming.
type slowModel struct {
	mu      sync.Mutex
	n       int
	started map[string]time.Time // by process: when its call's first token went out
	changed chan struct{}
}

const (
	slowWord  = 20 * time.Millisecond
	slowWords = 3000 // a minute of writing: far longer than a halt takes
)

func newSlowModel() *slowModel {
	return &slowModel{started: make(map[string]time.Time), changed: make(chan struct{}, 1)}
}

func (m *slowModel) Generate(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		c, _ := tools.CallerFrom(ctx)
		tick := time.NewTicker(slowWord)
		defer tick.Stop()
		for i := range slowWords {
			if i == 0 {
				m.mu.Lock()
				m.n++
				m.started[c.ProcessID] = time.Now()
				m.mu.Unlock()
			}
			if !yield(llm.Part{Kind: llm.PartText, Text: "word "}, nil) {
				return
			}
			if i == 0 {
				select {
				case m.changed <- struct{}{}:
				default:
				}
			}
			select {
			case <-ctx.Done():
				yield(llm.Part{}, context.Cause(ctx))
				return
			case <-tick.C:
			}
		}
		yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "c1", Name: tools.Respond,
			Arguments: []byte(`{"message":"Done.","awaiting_user_input":true}`)}}, nil)
	}
}

// streaming waits until the calls of every process of pids stream.
func (m *slowModel) streaming(ctx context.Context, pids []string) error {
	stall := time.NewTimer(stallTimeout)
	defer stall.Stop()
	for {
		m.mu.Lock()
		all := !slices.ContainsFunc(pids, func(pid string) bool { return m.started[pid].IsZero() })
		m.mu.Unlock()
		if all {
			return nil
		}
		select {
		case <-m.changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-stall.C:
			return fmt.Errorf("the model calls of %d processes did not begin within %s", len(pids), stallTimeout)
		}
	}
}

func (m *slowModel) firstToken(pid string) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.started[pid]
}

func (m *slowModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// commitClock notes when each process's turn committed.
type commitClock struct {
	mu      sync.Mutex
	at      map[string]time.Time
	changed chan struct{}
}

func newCommitClock() *commitClock {
	return &commitClock{at: make(map[string]time.Time), changed: make(chan struct{}, 1)}
}

func (c *commitClock) onCommit(rec store.Record, _ []conversation.Event) {
	now := time.Now()
	c.mu.Lock()
	c.at[rec.ID] = now
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// wait returns when pid's turn committed.
func (c *commitClock) wait(ctx context.Context, pid string) (time.Time, error) {
	stall := time.NewTimer(stallTimeout)
	defer stall.Stop()
	for {
		c.mu.Lock()
		at, ok := c.at[pid]
		c.mu.Unlock()
		if ok {
			return at, nil
		}
		select {
		case <-c.changed:
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-stall.C:
			return time.Time{}, fmt.Errorf("the turn of %s did not end within %s of its halt", pid, stallTimeout)
		}
	}
}
