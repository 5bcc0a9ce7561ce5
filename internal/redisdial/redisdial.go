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
	d := net.Dialer{Timeout: opts.DialTimeout, KeepAlive: 5 * time.Minute} // go-redis's own dialer's keep-alive
	if d.Timeout == 0 {
		d.Timeout = 5 * time.Second // go-redis's default DialTimeout
	}
	opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return opaque{c}, nil
	}
}

// opaque is a connection that does not expose its file descriptor (it is
// no syscall.Conn).
type opaque struct{ net.Conn }
