package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	segjson "github.com/segmentio/encoding/json"

	"github.com/engine-brain/brain/live"
)

// Live updates travel on Redis Pub/Sub, one channel per process,
// B live:<pid> (keys.go), as JSON: PUBLISH and SUBSCRIBE, not their
// sharded forms (SPUBLISH, SSUBSCRIBE, Redis 7). The classic commands work
// on every server brain runs on: Redis 6, which has no shard channels, and
// miniredis (brain demo), which has none either. On Redis Cluster, which
// the store does not support yet (doc.go), they work too, from any node
// and with a node's one subscribing connection (LiveFeed), at the cost of
// every message crossing the cluster bus to every Redis node. Shard
// channels would keep a process's updates on its slot's Redis node, but a
// subscribing connection reaches the channels of one Redis node only, so a
// watching node would need a connection per Redis node. The channel keeps
// the process's hash tag so that the switch, should a cluster need it, is
// to these two commands and to a feed per Redis node, not to the names.

// liveChannelSize is how many messages go-redis holds for a LiveFeed's
// reader before it waits; it drops one that waits a minute.
const liveChannelSize = 1024

// PublishLive publishes updates, each as JSON on the channel of its
// process, in one pipeline: one round trip for the batch. Subscribers of a
// process receive its updates in the order of updates. Nothing is kept:
// nobody subscribed, nobody receives them. With Config.WaitReplicas the
// batch does not wait for replicas (nothing in it is stored).
func (s *Store) PublishLive(ctx context.Context, updates []live.Update) error {
	if len(updates) == 0 {
		return nil
	}
	// One buffer for every payload; the pipeline writes them at Exec.
	buf := make([]byte, 0, 192*len(updates))
	ends := make([]int, len(updates))
	for i := range updates {
		var err error
		if buf, err = segjson.Append(buf, &updates[i], 0); err != nil {
			return fmt.Errorf("store: live update of %s: %w", updates[i].Process, err)
		}
		ends[i] = len(buf)
	}
	pipe := s.rdb.Pipeline()
	var channel any // named once for a run of updates of one process
	start := 0
	for i := range updates {
		if i == 0 || updates[i].Process != updates[i-1].Process {
			channel = s.keys.liveChannel(updates[i].Process)
		}
		pipe.Do(ctx, "publish", channel, buf[start:ends[i]:ends[i]])
		start = ends[i]
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("store: publishing %d live updates: %w", len(updates), err)
	}
	return nil
}

// LiveFeed is one Pub/Sub connection on which a node receives the live
// updates of the processes it subscribes to, however many. go-redis keeps
// it: after a failure it connects again and subscribes again to every
// process subscribed to (the updates published meanwhile are lost), and it
// pings an idle connection to find one that died. Subscribe, Unsubscribe
// and Close are safe for concurrent use; Receive has one caller.
type LiveFeed struct {
	keys layout
	ps   *redis.PubSub
	in   <-chan any
}

// LiveMessage is what a LiveFeed received: an update of process PID, or
// the confirmation of a subscription.
type LiveMessage struct {
	PID string
	// Subscribed: Redis confirmed that the feed receives PID's updates,
	// after Subscribe or after go-redis subscribed again on a new
	// connection. Update is empty.
	Subscribed bool
	Update     live.Update
	// Err: a message on PID's channel that is not an update.
	Err error
}

// LiveFeed opens a feed. go-redis connects at once, and keeps connecting
// until Close.
func (s *Store) LiveFeed() *LiveFeed {
	ps := s.rdb.Subscribe(context.Background()) // no channel: nothing sent yet
	return &LiveFeed{keys: s.keys, ps: ps, in: ps.ChannelWithSubscriptions(redis.WithChannelSize(liveChannelSize))}
}

// Subscribe asks Redis for the updates of process pid; they come once
// Receive sees its confirmation. An id that cannot name a process is
// ErrNotFound. Another error means the request did not reach Redis: call
// Unsubscribe, or go-redis subscribes again on its next connection.
func (f *LiveFeed) Subscribe(ctx context.Context, pid string) error {
	if !validID(pid) {
		return fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	if err := f.ps.Subscribe(ctx, f.keys.liveChannel(pid)); err != nil {
		return fmt.Errorf("store: subscribing to the live updates of %s: %w", pid, err)
	}
	return nil
}

// Unsubscribe stops the updates of process pid. go-redis forgets pid even
// when the request fails (its next connection does not subscribe to it),
// but a few updates may still come before Redis has it.
func (f *LiveFeed) Unsubscribe(ctx context.Context, pid string) error {
	if err := f.ps.Unsubscribe(ctx, f.keys.liveChannel(pid)); err != nil {
		return fmt.Errorf("store: unsubscribing from the live updates of %s: %w", pid, err)
	}
	return nil
}

// Receive calls handle with every update and subscription of the feed, in
// the order they came, until the feed is closed.
func (f *LiveFeed) Receive(handle func(LiveMessage)) {
	for m := range f.in {
		switch m := m.(type) {
		case *redis.Subscription:
			if pid, ok := livePID(m.Channel); ok && m.Kind == "subscribe" {
				handle(LiveMessage{PID: pid, Subscribed: true})
			}
		case *redis.Message:
			pid, ok := livePID(m.Channel)
			if !ok {
				continue
			}
			msg := LiveMessage{PID: pid}
			if err := segjson.Unmarshal([]byte(m.Payload), &msg.Update); err != nil {
				msg.Err = fmt.Errorf("store: a live update of %s: corrupt JSON: %w", pid, err)
			}
			handle(msg)
		}
	}
}

// Close closes the feed's connection; Receive returns.
func (f *LiveFeed) Close() error { return f.ps.Close() }

// livePID returns the process whose live channel is channel.
func livePID(channel string) (string, bool) {
	_, rest, ok := strings.Cut(channel, "}:live:")
	if !ok || !strings.HasPrefix(channel, keyPrefix+"{") {
		return "", false
	}
	return rest, true
}
