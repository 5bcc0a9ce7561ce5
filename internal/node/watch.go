package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/store"
)

// ErrNotRunning: the node is not started, or stopped.
var ErrNotRunning = errors.New("brain: node not running")

// watchBuffer is how many live updates a watcher may be behind before it
// loses the next ones.
const watchBuffer = 256

// subscribeTimeout bounds how long Watch waits for Redis to confirm a
// subscription; unsubscribeTimeout, how long the hub waits to end one.
const (
	subscribeTimeout   = 5 * time.Second
	unsubscribeTimeout = 5 * time.Second
)

// Watch returns the live updates of pid's running turns, from whichever
// node runs them, from when it returns until ctx ends or the node stops;
// then the channel is closed. A watcher that does not keep up loses
// updates (brain_live_watch_dropped_total), as one does while Redis is
// unreachable: the log, not this, is the record. Watch returns an error
// when Redis cannot be asked for the updates, or does not confirm within
// 5 s, and ErrNotRunning when the node is not running.
func (n *Node) Watch(ctx context.Context, pid string) (<-chan live.Update, error) {
	return n.watch.watch(ctx, pid)
}

// A hub carries the live updates of the processes watched on the node to
// their watchers, over one Pub/Sub connection (store.LiveFeed) for all of
// them, opened by the first Watch. It subscribes to a process when its
// first watcher comes and unsubscribes when its last goes. It hands each
// update to each watcher without waiting: one that is behind loses it.
type hub struct {
	store   *store.Store
	metrics *Metrics
	log     *zap.Logger
	buffer  int // of each watcher's channel

	mu      sync.Mutex
	running bool
	feed    *store.LiveFeed // nil until the first Watch
	topics  map[string]*topic
	stopped chan struct{} // closed by stop
	done    chan struct{} // closed when the feed's reader has returned
}

// A topic is a watched process: its watchers, and whether Redis has
// confirmed the subscription. A topic without watchers whose subscription
// is not confirmed yet stays until it is, and is unsubscribed then: no
// unsubscription is sent while a subscription is on its way, so every
// confirmation the feed reads is of the topic that is there.
type topic struct {
	watchers map[*watcher]struct{}
	ready    chan struct{} // closed when Redis confirmed the subscription
}

func (t *topic) confirmed() bool {
	select {
	case <-t.ready:
		return true
	default:
		return false
	}
}

type watcher struct {
	ch   chan live.Update
	stop func() bool // stops the context.AfterFunc that removes it
}

func newHub(st *store.Store, buffer int, m *Metrics, log *zap.Logger) *hub {
	return &hub{store: st, metrics: m, log: log, buffer: buffer, topics: make(map[string]*topic),
		stopped: make(chan struct{}), done: make(chan struct{})}
}

// start lets watchers come.
func (h *hub) start() {
	h.mu.Lock()
	h.running = true
	h.mu.Unlock()
}

// stop closes every watcher's channel and the feed, and returns when the
// feed's reader has. Watch fails from now on.
func (h *hub) stop() {
	h.mu.Lock()
	if !h.running {
		h.mu.Unlock()
		return
	}
	h.running = false
	close(h.stopped)
	for _, t := range h.topics {
		for w := range t.watchers {
			h.drop(w)
		}
	}
	clear(h.topics)
	feed := h.feed
	h.mu.Unlock()
	if feed == nil {
		return
	}
	if err := feed.Close(); err != nil {
		h.log.Warn("closing the live feed failed", zap.Error(err))
	}
	<-h.done
}

// watch is Node.Watch.
func (h *hub) watch(ctx context.Context, pid string) (<-chan live.Update, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	if !h.running {
		h.mu.Unlock()
		return nil, ErrNotRunning
	}
	if h.feed == nil {
		h.feed = h.store.LiveFeed()
		go func() {
			defer close(h.done)
			h.feed.Receive(h.dispatch)
		}()
	}
	t := h.topics[pid]
	if t == nil {
		t = &topic{watchers: make(map[*watcher]struct{}), ready: make(chan struct{})}
		// Sent with h.mu held, so that subscriptions and unsubscriptions
		// of a process reach Redis in the order the hub decided them.
		if err := h.feed.Subscribe(ctx, pid); err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				h.unsubscribe(pid)
			}
			h.mu.Unlock()
			return nil, fmt.Errorf("brain: watching %s: %w", pid, err)
		}
		h.topics[pid] = t
	}
	w := &watcher{ch: make(chan live.Update, h.buffer)}
	t.watchers[w] = struct{}{}
	h.mu.Unlock()

	timeout := time.NewTimer(subscribeTimeout)
	defer timeout.Stop()
	select {
	case <-t.ready:
	case <-ctx.Done():
		h.leave(pid, t, w)
		return nil, ctx.Err()
	case <-timeout.C:
		h.leave(pid, t, w)
		return nil, fmt.Errorf("brain: watching %s: Redis did not confirm the subscription within %s", pid, subscribeTimeout)
	case <-h.stopped:
		return nil, ErrNotRunning
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := t.watchers[w]; !ok || h.topics[pid] != t { // stopped meanwhile
		return nil, ErrNotRunning
	}
	w.stop = context.AfterFunc(ctx, func() { h.leave(pid, t, w) })
	return w.ch, nil
}

// leave removes watcher w of topic t of process pid, closing its channel,
// and unsubscribes when it was the last and the subscription is confirmed.
func (h *hub) leave(pid string, t *topic, w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := t.watchers[w]; !ok || h.topics[pid] != t {
		return // stopped
	}
	delete(t.watchers, w)
	h.drop(w)
	if len(t.watchers) == 0 && t.confirmed() {
		delete(h.topics, pid)
		h.unsubscribe(pid)
	}
}

// drop closes w's channel; h.mu is held.
func (h *hub) drop(w *watcher) {
	if w.stop != nil {
		w.stop()
	}
	close(w.ch)
}

// unsubscribe unsubscribes the feed from pid; h.mu is held. Should the
// request fail, go-redis has forgotten pid all the same, and its next
// connection will not subscribe to it; updates that still come find no
// topic.
func (h *hub) unsubscribe(pid string) {
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	if err := h.feed.Unsubscribe(ctx, pid); err != nil {
		h.log.Debug("unsubscribing from live updates failed", zap.String("process", pid), zap.Error(err))
	}
}

// dispatch handles a message of the feed: a confirmation readies its
// topic (or ends it, when its watchers have gone); an update goes to each
// watcher of its process that has room for it.
func (h *hub) dispatch(m store.LiveMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[m.PID]
	switch {
	case t == nil:
	case m.Subscribed:
		if !t.confirmed() {
			close(t.ready)
		}
		if len(t.watchers) == 0 {
			delete(h.topics, m.PID)
			h.unsubscribe(m.PID)
		}
	case m.Err != nil:
		h.log.Warn("a live update did not decode", zap.String("process", m.PID), zap.Error(m.Err))
	default:
		for w := range t.watchers {
			select {
			case w.ch <- m.Update:
			default:
				h.metrics.watchDrop()
			}
		}
	}
}
