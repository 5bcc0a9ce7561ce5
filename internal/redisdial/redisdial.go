// Package redisdial dials Redis for the clients brain makes itself.
package redisdial

import (
	"context"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// Unprobed makes opts dial plain TCP (or unix socket) connections that
// go-redis does not probe each time its pool hands one out. The probe is a
// system call (a non-blocking peek at the socket) that go-redis makes only
// when a connection exposes its file descriptor; brain keeps its
// connections busy, so the probe finds nothing and costs a system call per
// round trip (brain bench: about 3 a turn, of 25). A connection that did
// die fails its next command, which go-redis retries on a new connection,
// as it does when one dies between the probe and the command. TLS
// connections (rediss://), which go-redis does not probe, and a Dialer
// already set are left as they are.
func Unprobed(opts *redis.Options) {
	if opts.TLSConfig != nil || opts.Dialer != nil {
		return
	}
	opts.Dialer = unprobed(opts.DialTimeout)
}

// unprobed is a dialer of connections that go-redis does not probe; see
// Unprobed.
func unprobed(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute} // go-redis's own dialer's keep-alive
	if d.Timeout == 0 {
		d.Timeout = 5 * time.Second // go-redis's default DialTimeout
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return opaque{c}, nil
	}
}

// NewClusterClient makes a client of a Redis Cluster whose connections
// go-redis does not probe (as Unprobed says, TLS and a Dialer already set
// left alone) and which reloads its map of the slots as soon as it cannot
// dial a node. go-redis reloads the map when a node redirects a command
// (MOVED), which a master that is down never does, and otherwise only
// every ClusterStateReloadInterval (a minute by default): after a
// failover it would go on dialing the dead master, failing every command
// of its slots, until then. With the reload, a command retried by
// go-redis (MaxRedirects) finds the replica that took over.
func NewClusterClient(opts *redis.ClusterOptions) *redis.ClusterClient {
	if opts.TLSConfig == nil && opts.Dialer == nil {
		opts.Dialer = unprobed(opts.DialTimeout)
	}
	cc := redis.NewClusterClient(opts)
	cc.OnNewNode(func(node *redis.Client) { node.AddHook(reloadOnDialError{cc}) })
	return cc
}

// reloadOnDialError is a hook of a cluster's node client that has the
// cluster client reload its map of the slots when the node cannot be
// dialed; see NewClusterClient. (go-redis coalesces reloads asked for
// while one runs.)
type reloadOnDialError struct{ cc *redis.ClusterClient }

func (h reloadOnDialError) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			h.cc.ReloadState(ctx)
		}
		return conn, err
	}
}

func (reloadOnDialError) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (reloadOnDialError) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// opaque is a connection that does not expose its file descriptor (it is
// no syscall.Conn).
type opaque struct{ net.Conn }
