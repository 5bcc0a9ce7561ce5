package store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/store"
)

// TestUnavailable checks which failures say that Redis cannot serve just
// now: a master short of replicas, a server that is gone, and one that
// answers LOADING; not a missing
// process or another error.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := testutil.StartRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1}) // fails at once when the server is gone
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := store.New(rdb, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, store.NewProcess{ID: "p", Recipe: "r", Engine: engine}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, "nobody")
	if !errors.Is(err, store.ErrNotFound) || store.Unavailable(err) {
		t.Errorf("a missing process: %v, unavailable %v; want ErrNotFound, available", err, store.Unavailable(err))
	}
	if err := fmt.Errorf("store: %w", errors.New("something else")); store.Unavailable(err) {
		t.Errorf("%v: unavailable", err)
	}
	if store.Unavailable(nil) {
		t.Error("nil: unavailable")
	}

	// A master that must have a replica to write, and has none, refuses.
	if err := srv.Client(t).ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Post(ctx, "p", user("hello"))
	if err == nil || !store.Unavailable(err) {
		t.Errorf("a post to a master short of replicas: %v, unavailable %v; want an error, unavailable", err, store.Unavailable(err))
	}

	srv.Shutdown(t)
	_, _, err = s.Post(ctx, "p", user("hello"))
	if err == nil || !store.Unavailable(err) {
		t.Errorf("a post to a server that is gone: %v, unavailable %v; want an error, unavailable", err, store.Unavailable(err))
	}

	loading := redis.NewClient(&redis.Options{Addr: loadingServer(t), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { _ = loading.Close() })
	err = loading.Get(ctx, "k").Err()
	if err == nil || !store.Unavailable(fmt.Errorf("store: %w", err)) {
		t.Errorf("a server loading its data: %v, unavailable %v; want an error, unavailable", err, store.Unavailable(err))
	}
}

// loadingServer serves Redis's protocol as a server does while it loads
// its data after a restart: every command gets a LOADING error.
func loadingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					// A command is an array: *n, then $len and the bytes of each argument.
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					var n int
					if _, err := fmt.Sscanf(line, "*%d", &n); err != nil {
						return
					}
					for range 2 * n {
						if _, err := r.ReadString('\n'); err != nil {
							return
						}
					}
					if _, err := conn.Write([]byte("-LOADING Redis is loading the dataset in memory\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}
