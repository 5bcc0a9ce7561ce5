package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Cluster's wake streams cannot be waited on in one command, so a node
// polls them (pollWakes). The bell lets it wait instead: the scripts touch
// a wake stream's bell key (brain:bell:{tag}:<engine>) whenever they queue
// a wake on it, and on every master Redis's client-side caching in
// broadcast mode (CLIENT TRACKING ... BCAST PREFIX brain:bell:) tells a
// connection subscribed to __redis__:invalidate which bell keys were
// touched, at the end of the event loop that touched them. One prefix, not
// one per partition's wake streams: Redis matches every key a command
// writes against every prefix tracked (callgrind: a third more
// instructions a turn with a master's 21 prefixes, 1 % more with one).
//
// A ring is a hint, never the only way a wake is found: it may come a
// little after the reply of the script that queued the wake, and a master
// that fails or hands its slots on loses the rings meanwhile. So the
// rounds over every stream go on, bellPoll apart, and a bell that cannot
// be set up, or breaks, leaves the node polling as before until it is set
// up again.

// bellPoll is how far apart an idle node looks at all its streams while
// its bell is up: what a lost ring costs at most.
const bellPoll = 250 * time.Millisecond

// bellRetry is how long a bell that failed to set up waits before it is
// tried again, and how often a bell that is up checks that it listens to
// every master that serves a partition.
const bellRetry = time.Second

// bell rings when a wake is queued on a stream whose master it listens
// to.
type bell struct {
	bases []string // of every partition
	rings chan struct{}

	ringMu sync.Mutex
	rung   map[string]bool // wake streams that rang since the last take
	all    bool            // any may have (a flush, a bell set up again)

	mu      sync.Mutex
	masters map[string]*bellMaster // by address
	up      bool
	closed  bool
	checked time.Time // when the set-up was tried or last checked
	down    error     // why the last set-up failed
}

// bellMaster is the bell's part on one master: a subscriber and the
// connection whose tracking redirects to it.
type bellMaster struct {
	client   *redis.Client
	sub      *redis.PubSub
	tracking *redis.Conn
	cancel   context.CancelFunc
	done     chan struct{}
}

// newBell returns a bell for the partitions of l, not yet set up.
func newBell(l layout) *bell {
	return &bell{bases: l.bases, rings: make(chan struct{}, 1)}
}

// ring notes that streams had wakes queued (none named: any may have);
// one pending ring is enough.
func (b *bell) ring(streams []string) {
	b.ringMu.Lock()
	if len(streams) == 0 {
		b.all = true
	}
	for _, st := range streams {
		if b.rung == nil {
			b.rung = map[string]bool{}
		}
		b.rung[st] = true
	}
	b.ringMu.Unlock()
	select {
	case b.rings <- struct{}{}:
	default:
	}
}

// invalidated rings for the bell keys among keys, the keys a master says
// were written (none after a flush: anything may have been).
func (b *bell) invalidated(keys []string) {
	if len(keys) == 0 {
		b.ring(nil)
		return
	}
	streams := make([]string, 0, len(keys))
	for _, k := range keys {
		if st := streamOfBell(k); st != "" {
			streams = append(streams, st)
		}
	}
	if len(streams) > 0 {
		b.ring(streams)
	}
}

// again rings for the streams that gave perStream of wakes: they may hold
// more, which the next look takes.
func (b *bell) again(wakes []Wake, perStream int) {
	n := map[string]int{}
	var full []string
	for _, w := range wakes {
		if n[w.Stream]++; n[w.Stream] == perStream {
			full = append(full, w.Stream)
		}
	}
	if len(full) > 0 {
		b.ring(full)
	}
}

// take returns which of streams rang since the last take, and whether any
// may have (all). Rings of other streams are dropped: a node that reads
// them later finds their wakes in a round.
func (b *bell) take(streams []string) (rung []string, all bool) {
	b.ringMu.Lock()
	defer b.ringMu.Unlock()
	for _, st := range streams {
		if b.rung[st] {
			rung = append(rung, st)
		}
	}
	all, b.rung, b.all = b.all, nil, false
	return rung, all
}

// ready reports whether the bell is up, setting it up when it is not (at
// most once every bellRetry), and again when a master's part stopped
// listening or tracking, or the masters that serve the partitions
// changed.
func (b *bell) ready(ctx context.Context, cc *redis.ClusterClient) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	if b.up && b.alive() && time.Since(b.checked) < bellRetry {
		return true
	}
	if !b.up && time.Since(b.checked) < bellRetry {
		return false
	}
	b.checked = time.Now()
	addrs, err := b.mastersNow(ctx, cc)
	if err == nil && b.up && b.alive() && b.listensTo(addrs) && b.tracking(ctx) {
		return true
	}
	b.stop()
	b.ring(nil) // what changed meanwhile went unheard: look at everything
	if err == nil {
		err = b.start(ctx, cc, addrs)
	}
	b.down = nil
	if err != nil {
		b.down = fmt.Errorf("store: the wake bell is down: %w", err)
		b.stop()
		return false
	}
	b.up = true
	return true
}

// downBecause is why the last set-up of the bell failed, nil when it did
// not (or none was tried).
func (b *bell) downBecause() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.down
}

// close takes the bell down for good.
func (b *bell) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.stop()
}

// alive reports whether every master's part still listens. The caller
// holds b.mu.
func (b *bell) alive() bool {
	for _, m := range b.masters {
		select {
		case <-m.done:
			return false
		default:
		}
	}
	return true
}

// tracking reports whether each master still tracks the bell keys for
// the bell: a tracking connection that dropped leaves the subscriber
// listening to nothing. The caller holds b.mu.
func (b *bell) tracking(ctx context.Context) bool {
	for _, m := range b.masters {
		info, err := m.tracking.Do(ctx, "CLIENT", "TRACKINGINFO").Slice()
		if err != nil || len(info) < 2 {
			return false
		}
		flags, _ := info[1].([]any)
		if !slices.Contains(flags, any("on")) || slices.Contains(flags, any("broken_redirect")) {
			return false
		}
	}
	return true
}

// mastersNow are the clients of the masters that serve a partition, by
// address, as the client's slot map says.
func (b *bell) mastersNow(ctx context.Context, cc *redis.ClusterClient) (map[string]*redis.Client, error) {
	out := map[string]*redis.Client{}
	for _, base := range b.bases {
		m, err := cc.MasterForKey(ctx, base)
		if err != nil {
			return nil, err
		}
		out[m.Options().Addr] = m
	}
	return out, nil
}

// listensTo reports whether the bell's masters are those of addrs. The
// caller holds b.mu.
func (b *bell) listensTo(addrs map[string]*redis.Client) bool {
	if len(addrs) != len(b.masters) {
		return false
	}
	for addr := range addrs {
		if b.masters[addr] == nil {
			return false
		}
	}
	return true
}

// start sets the bell up on every master of addrs. The caller holds b.mu.
func (b *bell) start(ctx context.Context, cc *redis.ClusterClient, addrs map[string]*redis.Client) error {
	// The options are made from the cluster client's, not copied from the
	// node's client: go-redis writes those as its connections start.
	co := cc.Options()
	b.masters = map[string]*bellMaster{}
	for addr := range addrs {
		o := &redis.Options{Addr: addr, Dialer: co.Dialer, Username: co.Username, Password: co.Password,
			CredentialsProvider: co.CredentialsProvider, CredentialsProviderContext: co.CredentialsProviderContext,
			TLSConfig: co.TLSConfig, DialTimeout: co.DialTimeout, ReadTimeout: co.ReadTimeout, WriteTimeout: co.WriteTimeout}
		m, err := startBellMaster(ctx, o, b.invalidated)
		if err != nil {
			return fmt.Errorf("bell on %s: %w", addr, err)
		}
		b.masters[addr] = m
	}
	return nil
}

// stop takes the bell down. The caller holds b.mu.
func (b *bell) stop() {
	for _, m := range b.masters {
		m.close()
	}
	b.masters, b.up = nil, false
}

// startBellMaster subscribes to the invalidations of one master and turns
// tracking on for the bell keys, redirected to the subscriber; ring is
// called with the keys of each invalidation until close.
func startBellMaster(ctx context.Context, o *redis.Options, ring func([]string)) (*bellMaster, error) {
	o.Protocol = 2 // invalidations come as Pub/Sub messages to a RESP2 subscriber
	o.PoolSize = 2
	o.ClientName = "brain-bell-" + strings.ToLower(rand.Text()[:12])
	m := &bellMaster{client: redis.NewClient(o), done: make(chan struct{})}
	m.sub = m.client.Subscribe(ctx, "__redis__:invalidate")
	if _, err := m.sub.Receive(ctx); err != nil { // the subscription is in place
		m.close()
		return nil, err
	}
	id, err := subscriberID(ctx, m.client, o.ClientName)
	if err != nil {
		m.close()
		return nil, err
	}
	m.tracking = m.client.Conn()
	if err := m.tracking.Do(ctx, "CLIENT", "TRACKING", "ON", "REDIRECT", id, "BCAST", "PREFIX", bellPrefix).Err(); err != nil {
		m.close()
		return nil, err
	}
	listen, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	ch := m.sub.ChannelWithSubscriptions()
	go func() {
		defer close(m.done)
		for {
			select {
			case <-listen.Done():
				return
			case msg, ok := <-ch:
				if !ok {
					return
				}
				switch msg := msg.(type) {
				case *redis.Subscription:
					return // a new connection: the tracking redirects to the old one
				case *redis.Message:
					ring(msg.PayloadSlice) // the keys that changed; none after a flush
				}
			}
		}
	}()
	return m, nil
}

// subscriberID finds the client id of the subscriber named name (CLIENT
// LIST TYPE pubsub, which leaves out the many connections that are not).
func subscriberID(ctx context.Context, c *redis.Client, name string) (string, error) {
	list, err := c.Do(ctx, "CLIENT", "LIST", "TYPE", "pubsub").Text()
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(list) {
		f := map[string]string{}
		for kv := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["name"] == name && f["sub"] != "" && f["sub"] != "0" {
			return f["id"], nil
		}
	}
	return "", errors.New("the subscriber is not in CLIENT LIST")
}

func (m *bellMaster) close() {
	if m.cancel != nil {
		m.cancel()
	}
	if m.tracking != nil {
		_ = m.tracking.Close()
	}
	if m.sub != nil {
		_ = m.sub.Close()
	}
	_ = m.client.Close()
	if m.cancel == nil {
		close(m.done)
	}
}
