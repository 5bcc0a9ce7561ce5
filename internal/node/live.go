package node

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/store"
)

// liveBuffer is how many live updates a node holds for Redis: what its
// turns publish while one batch is on its way, and while Redis is slow.
// Beyond it updates are dropped (they are ephemeral; the log has what
// matters).
const liveBuffer = 4096

// liveStopTimeout bounds the last batch a stopping node sends.
const liveStopTimeout = time.Second

// publisher is the node's live.Sink: it carries the live updates of the
// node's turns to Redis (store.PublishLive), where the nodes that watch
// their processes receive them (watch.go).
//
// Publish never waits: it puts the update in a bounded buffer, or drops
// it when the buffer is full. One goroutine sends what the buffer holds as
// one pipeline, without waiting for a tick: the first update after a quiet
// spell goes out at once, and those that come while a batch is on its way
// go together in the next (as store's batcher does for scripts). Before a
// batch goes, the text deltas in it that continue one another are joined
// (coalesce), so a model that streams fast costs Redis a message per
// round trip, not per token.
type publisher struct {
	store   *store.Store
	metrics *Metrics
	log     *zap.Logger
	size    int

	mu      sync.Mutex
	pending []live.Update // what Publish queued since the last batch took it
	running bool          // between start and stop: Publish takes updates
	stopped bool
	// wake holds a token when pending has updates for the sender.
	wake chan struct{}
	quit chan struct{} // closed by stop
	done chan struct{} // closed when the sender has returned
	join coalescer     // the sender's
}

var _ live.Sink = (*publisher)(nil)

func newPublisher(st *store.Store, size int, m *Metrics, log *zap.Logger) *publisher {
	return &publisher{store: st, metrics: m, log: log, size: size, pending: make([]live.Update, 0, size),
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// Publish queues u for Redis, or drops it when the buffer is full or the
// publisher is not running. It never waits for Redis.
func (p *publisher) Publish(u live.Update) {
	p.mu.Lock()
	if !p.running || len(p.pending) >= p.size {
		p.mu.Unlock()
		p.metrics.live(liveDropped, 1)
		return
	}
	p.pending = append(p.pending, u)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // the sender has a token already
	}
}

// start starts the sender.
func (p *publisher) start() {
	p.mu.Lock()
	p.running = true
	p.mu.Unlock()
	go p.send()
}

// stop drops the updates published from now on, sends what the buffer
// holds (for at most liveStopTimeout) and returns when the sender has.
// Call it after start; again, it does nothing.
func (p *publisher) stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.running, p.stopped = false, true
	p.mu.Unlock()
	close(p.quit)
	<-p.done
}

// send sends the buffer's updates, a batch at a time, until stop.
func (p *publisher) send() {
	defer close(p.done)
	spare := make([]live.Update, 0, p.size)
	for {
		select {
		case <-p.wake:
			spare = p.flush(context.Background(), spare)
		case <-p.quit:
			ctx, cancel := context.WithTimeout(context.Background(), liveStopTimeout)
			p.flush(ctx, spare)
			cancel()
			return
		}
	}
}

// flush takes what the buffer holds, gives it spare, empty, as the next
// buffer, and sends it coalesced. It returns what it took, emptied, the
// spare of the next flush.
func (p *publisher) flush(ctx context.Context, spare []live.Update) []live.Update {
	p.mu.Lock()
	batch := p.pending
	p.pending = spare
	p.mu.Unlock()
	if len(batch) == 0 {
		return batch
	}
	n := len(batch)
	out, joined := p.join.coalesce(batch)
	if err := p.store.PublishLive(ctx, out); err != nil {
		p.metrics.live(liveFailed, n)
		p.metrics.redisError(err)
		p.log.Debug("publishing live updates failed; they are lost", zap.Int("updates", n), zap.Error(err))
	} else {
		p.metrics.live(livePublished, len(out))
		p.metrics.live(liveCoalesced, joined)
	}
	clear(batch[:n]) // let the texts go
	return batch[:0]
}

// A coalescer joins the text deltas of a batch that continue one another:
// an update of kind Text or Answer whose process, turn, round, kind and
// User are those of the process's update before it in the batch, and
// whose Offset is where that one's delta ends. The joined update keeps the
// first one's Offset and At. Updates of other processes in between do not
// matter (each process has its channel); any other update of the same
// process does, and so does a gap in the offsets (an update dropped
// between them): those are not joined, so a client sees every gap. It
// keeps its buffers from one batch to the next.
type coalescer struct {
	last  map[string]tail // process → its last update in the output
	bufs  [][]byte        // the deltas being joined, one per joined update
	joins []int           // the joined updates, by index in the output
}

// A tail is the last update of a process in the output, at index at, and
// the buffer its delta is being joined in (-1: none yet).
type tail struct{ at, buf int }

// maxKeptJoin is the largest buffer of joined text a coalescer keeps for
// the next batch.
const maxKeptJoin = 64 << 10

// coalesce joins what it can of batch, in place, and returns what is
// left, and how many updates it joined to others.
func (c *coalescer) coalesce(batch []live.Update) (out []live.Update, joined int) {
	if c.last == nil {
		c.last = make(map[string]tail)
	}
	clear(c.last)
	c.joins = c.joins[:0]
	out = batch[:0] // out never passes the update being read
	for _, u := range batch {
		if t, ok := c.last[u.Process]; ok && joinable(out[t.at], u) {
			prev := &out[t.at]
			end := prev.Offset + len(prev.Delta)
			if t.buf >= 0 {
				end = prev.Offset + len(c.bufs[t.buf])
			}
			if u.Offset == end {
				if t.buf < 0 {
					t.buf = len(c.joins)
					if t.buf == len(c.bufs) {
						c.bufs = append(c.bufs, nil)
					}
					c.bufs[t.buf] = append(c.bufs[t.buf][:0], prev.Delta...)
					c.joins = append(c.joins, t.at)
					c.last[u.Process] = t
				}
				c.bufs[t.buf] = append(c.bufs[t.buf], u.Delta...)
				joined++
				continue
			}
		}
		c.last[u.Process] = tail{at: len(out), buf: -1}
		out = append(out, u)
	}
	for buf, at := range c.joins {
		out[at].Delta = string(c.bufs[buf])
		if cap(c.bufs[buf]) > maxKeptJoin {
			c.bufs[buf] = nil
		}
	}
	return out, joined
}

// joinable reports whether u may continue prev's delta (offsets aside).
func joinable(prev, u live.Update) bool {
	return (u.Kind == live.Text || u.Kind == live.Answer) && prev.Kind == u.Kind &&
		prev.Turn == u.Turn && prev.Round == u.Round && prev.User == u.User
}
