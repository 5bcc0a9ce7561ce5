package redisdial_test

import (
	"context"
	"crypto/tls"
	"net"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/internal/redisdial"
	"github.com/engine-brain/brain/internal/testutil"
)

// TestUnprobed checks that an unprobed client works and that its
// connections hide their file descriptor, which is what keeps go-redis
// from probing them; and that TLS options and a Dialer already set are
// left alone.
func TestUnprobed(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	opts := &redis.Options{Addr: srv.Addr}
	redisdial.Unprobed(opts)
	conn, err := opts.Dialer(t.Context(), "tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, ok := conn.(syscall.Conn); ok {
		t.Error("the connection exposes its file descriptor: go-redis would probe it before every use")
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	for range 3 { // the same pooled connection, handed out again
		if err := rdb.Set(t.Context(), "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got := rdb.Get(t.Context(), "k").Val(); got != "v" {
		t.Errorf("GET k = %q, want v", got)
	}

	withTLS := &redis.Options{Addr: srv.Addr, TLSConfig: &tls.Config{}}
	redisdial.Unprobed(withTLS)
	if withTLS.Dialer != nil {
		t.Error("a TLS client got a dialer: go-redis would no longer do the TLS handshake")
	}
	own := func(ctx context.Context, network, addr string) (net.Conn, error) { return nil, nil }
	given := &redis.Options{Addr: srv.Addr, Dialer: own}
	redisdial.Unprobed(given)
	if c, _ := given.Dialer(t.Context(), "tcp", srv.Addr); c != nil {
		t.Error("a Dialer already set was replaced")
	}
}
