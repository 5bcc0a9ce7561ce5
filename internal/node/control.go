package node

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/internal/ctxtime"
	"github.com/engine-brain/brain/store"
)

// controls carries what reaches the node's running turns while they run —
// their process paused, stopped or failed (a halt), a message that cuts
// the model call in flight (an interrupt) — to each turn's engine
// (engines.Turn's Halt and Interrupt). The news comes on the node's
// signal channel (store.Signals), and, for a halt whose signal was lost,
// from the lease's renewal.
type controls struct {
	mu    sync.Mutex
	turns map[string]*control // by process: a node runs one turn of a process at a time
}

// control is one running turn's.
type control struct {
	halt      chan struct{} // closed on a halt
	halted    sync.Once
	interrupt chan struct{} // one pending interrupt at most
}

func newControls() *controls { return &controls{turns: make(map[string]*control)} }

// add returns the control of the turn of pid that starts; remove it when
// the turn ends.
func (cs *controls) add(pid string) *control {
	c := &control{halt: make(chan struct{}), interrupt: make(chan struct{}, 1)}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.turns[pid] = c
	return c
}

func (cs *controls) remove(pid string, c *control) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.turns[pid] == c {
		delete(cs.turns, pid)
	}
}

// signal passes s to the turn of its process, if one runs here.
func (cs *controls) signal(s store.Signal) {
	cs.mu.Lock()
	c := cs.turns[s.Process]
	cs.mu.Unlock()
	if c == nil {
		return
	}
	switch s.What {
	case store.Halt:
		c.stop()
	case store.Interrupt:
		select {
		case c.interrupt <- struct{}{}:
		default: // one is pending already
		}
	}
}

// stop halts the turn, once.
func (c *control) stop() { c.halted.Do(func() { close(c.halt) }) }

// listen passes the node's signals to its turns until ctx ends,
// subscribing again after a failure.
func (n *Node) listen(ctx context.Context) {
	for ctx.Err() == nil {
		sub, err := n.store.Signals(ctx, n.cfg.NodeID)
		if err != nil {
			if ctx.Err() == nil {
				n.cfg.Metrics.redisError(err)
				n.log.Warn("subscribing to the node's signals failed; a pause or stop reaches a running turn at its lease's renewal", zap.Error(err))
				_ = ctxtime.Sleep(ctx, time.Second)
			}
			continue
		}
		done := make(chan struct{})
		go func() {
			select {
			case <-ctx.Done():
				_ = sub.Close()
			case <-done:
			}
		}()
		for s := range sub.C() {
			n.controls.signal(s)
		}
		close(done)
	}
}
