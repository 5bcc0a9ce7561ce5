package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxPipelines is how many pipelines a batcher has in flight at once: two,
// so that the server works on one while the replies of the other travel.
const maxPipelines = 2

// A batcher sends the commands that goroutines give it at about the same
// time as one pipeline: one write, one read and one wake-up of the server
// for all of them instead of one each. Under load a node's turns make
// their calls together, and this is most of what such a call costs (brain
// bench: Redis CPU per turn −21 %, node CPU −19 %, turns/s +27 %).
//
// No call waits for a timer or for others to come: a call that finds a
// pipeline slot free goes out at once, with whatever was waiting; one that
// does not waits, and is sent with everything that came meanwhile when a
// slot frees. There are no goroutines of its own: the caller whose
// pipeline returns hands its slot to the first waiting call, whose
// goroutine sends the next one.
//
// With replicas set, every pipeline ends with Redis's WAIT: the calls in it
// are answered once that many replicas have their writes, or, after
// waitTimeout, fail with ErrNotReplicated (see Config.WaitReplicas). WAIT
// covers the writes made before it on its connection, which is why it
// goes in the pipeline.
type batcher struct {
	rdb         redis.UniversalClient
	replicas    int
	waitTimeout time.Duration

	mu      sync.Mutex
	waiting []*batchCall
	running int // pipelines in flight
}

type batchCall struct {
	ctx  context.Context
	cmds []redis.Cmder // sent together, in order
	// done is closed when cmds have their replies, or when the call is to
	// send the next pipeline, batch.
	done  chan struct{}
	batch []*batchCall
}

func newBatcher(rdb redis.UniversalClient, replicas int, waitTimeout time.Duration) *batcher {
	return &batcher{rdb: rdb, replicas: replicas, waitTimeout: waitTimeout}
}

// do sends cmds, one after the other in a pipeline with others, and
// returns the first one's error once they all have their replies. A call
// whose ctx ends before it is sent is not sent; once sent, it is waited
// for (the server may be running it), bounded by the client's timeouts as
// any command is.
func (b *batcher) do(ctx context.Context, cmds ...redis.Cmder) error {
	c := &batchCall{ctx: ctx, cmds: cmds, done: make(chan struct{})}
	b.mu.Lock()
	if b.running < maxPipelines {
		// Nothing waits while a slot is free: send hands every freed slot
		// to the waiting calls.
		b.running++
		b.mu.Unlock()
		b.send(c, []*batchCall{c})
		return cmds[0].Err()
	}
	b.waiting = append(b.waiting, c)
	b.mu.Unlock()
	<-c.done
	if c.batch != nil {
		b.send(c, c.batch)
	}
	return cmds[0].Err()
}

// send runs batch, which holds sender's own call, as one pipeline, hands
// the slot on to the calls that came meanwhile, if any, and then tells the
// others of batch that their replies are in.
func (b *batcher) send(sender *batchCall, batch []*batchCall) {
	live := make([]*batchCall, 0, len(batch))
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			for _, cmd := range c.cmds {
				cmd.SetErr(err)
			}
			continue
		}
		live = append(live, c)
	}
	if len(live) > 0 {
		// Each command gets its own reply or error; one caller's ending
		// context must not cut the replies of the others.
		ctx := context.WithoutCancel(live[0].ctx)
		if cluster, ok := b.rdb.(*redis.ClusterClient); ok && b.replicas > 0 {
			b.sendOnMasters(ctx, cluster, live)
		} else {
			b.exec(ctx, b.rdb, live)
		}
	}

	b.mu.Lock()
	next := b.waiting
	b.waiting = nil
	if len(next) == 0 {
		b.running--
	}
	b.mu.Unlock()
	if len(next) > 0 {
		next[0].batch = next
		close(next[0].done)
	}
	for _, c := range batch {
		if c != sender {
			close(c.done)
		}
	}
}

// replicated fails the calls of batch that succeeded when wait, the WAIT
// that ended their pipeline, says fewer than b.replicas replicas have
// their writes: the master made them, but a failover now could lose them.
func (b *batcher) replicated(batch []*batchCall, wait *redis.IntCmd) {
	if why := b.notReplicated(wait); why != nil {
		for _, c := range batch {
			if c.cmds[0].Err() == nil {
				c.cmds[0].SetErr(why)
			}
		}
	}
}

// notReplicated says why wait, a WAIT, shows a write not on enough
// replicas, or returns nil.
func (b *batcher) notReplicated(wait *redis.IntCmd) error {
	got, err := wait.Result()
	switch {
	case err != nil:
		return fmt.Errorf("%w: WAIT: %w", ErrNotReplicated, err)
	case got < int64(b.replicas):
		return fmt.Errorf("%w: %d of %d replicas acknowledged within %s", ErrNotReplicated, got, b.replicas, b.waitTimeout)
	}
	return nil
}

// exec runs calls as one pipeline of rdb, ending with a WAIT when writes
// wait for replicas: WAIT counts the writes of the connection that sends
// it, and a pipeline is one connection.
func (b *batcher) exec(ctx context.Context, rdb interface{ Pipeline() redis.Pipeliner }, calls []*batchCall) {
	pipe := rdb.Pipeline()
	for _, c := range calls {
		for _, cmd := range c.cmds {
			_ = pipe.Process(c.ctx, cmd)
		}
	}
	var wait *redis.IntCmd
	if b.replicas > 0 {
		wait = redis.NewIntCmd(ctx, "wait", b.replicas, b.waitTimeout.Milliseconds())
		_ = pipe.Process(ctx, wait)
	}
	_, _ = pipe.Exec(ctx)
	if wait != nil {
		b.replicated(calls, wait)
	}
}

// sendOnMasters runs calls on a Cluster whose writes wait for replicas,
// where replicas follow each master: one pipeline per master, of the
// calls whose keys it serves, each ending with its own WAIT, all at once.
// (A WAIT sent apart, on another connection, would find no write of its
// own to wait for.) A master's client does not follow a slot that moved:
// such a call fails, and the slot map is read again for the next.
func (b *batcher) sendOnMasters(ctx context.Context, cluster *redis.ClusterClient, calls []*batchCall) {
	byMaster := map[*redis.Client][]*batchCall{}
	for _, c := range calls {
		args := c.cmds[0].Args()
		if len(args) < 4 {
			c.cmds[0].SetErr(fmt.Errorf("store: %s has no key to find its master by", args[0]))
			continue
		}
		m, err := cluster.MasterForKey(ctx, fmt.Sprint(args[3])) // a script's first key (fcall, evalsha, eval)
		if err != nil {
			for _, cmd := range c.cmds {
				cmd.SetErr(err)
			}
			continue
		}
		byMaster[m] = append(byMaster[m], c)
	}
	var wg sync.WaitGroup
	for m, cs := range byMaster {
		wg.Go(func() { b.exec(ctx, m, cs) })
	}
	wg.Wait()
	for _, c := range calls {
		for _, cmd := range c.cmds {
			if movedOrGone(cmd.Err()) {
				cluster.ReloadState(ctx)
				return
			}
		}
	}
}

// movedOrGone reports whether err says a slot is no longer where the slot
// map has it: a redirection, a cluster that is down, or a master that
// does not answer.
func movedOrGone(err error) bool {
	var reply redis.Error
	switch {
	case err == nil, errors.Is(err, ErrNotReplicated):
		return false
	case !errors.As(err, &reply):
		return true
	}
	for _, prefix := range []string{"MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN"} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}
