// Package testutil holds helpers shared by the tests of several packages.
package testutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireRedisEnv names the environment variable that turns a missing
// redis-server binary from a skip into a failure. CI sets it to 1.
const RequireRedisEnv = "BRAIN_REQUIRE_REDIS"

// redisStartTimeout bounds how long a redis-server may take to say it is
// ready; it only guards against a hung start, it never paces a test.
const redisStartTimeout = 20 * time.Second

// RedisServer is a real redis-server on a free loopback port, owned by one
// test and stopped when it ends.
type RedisServer struct {
	Addr string
}

// Redis starts a fresh redis-server for this test and returns a client for
// it. Each test gets its own server, so parallel tests never see each
// other's keys. When the binary is missing the test is skipped loudly, or
// fails when BRAIN_REQUIRE_REDIS=1.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	return StartRedis(t).Client(t)
}

// StartRedis starts a redis-server for this test; see Redis.
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	bin, err := redisBinary()
	if err != nil {
		if os.Getenv(RequireRedisEnv) == "1" {
			t.Fatalf("testutil: %v (%s=1 makes this a failure; install it with `apt-get install -y redis-server`)", err, RequireRedisEnv)
		}
		t.Skipf("SKIPPED: this test needs a real redis-server: %v. Install it with `apt-get install -y redis-server` (`make test` does this when it can).", err)
	}
	// A port found free can be taken before redis binds it; try a few.
	var lastErr error
	for range 5 {
		srv, err := startRedis(t, bin)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	t.Fatalf("testutil: cannot start redis-server: %v", lastErr)
	return nil
}

// Client returns a new client for the server, closed when the test ends.
func (s *RedisServer) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func redisBinary() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	// Debian puts it in /usr/bin, but some images leave /usr/sbin off PATH.
	for _, p := range []string{"/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("redis-server binary not found on PATH")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startRedis(t testing.TB, bin string) (*RedisServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--logfile", "",
		"--daemonize", "no",
	)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() { ready <- waitReady(out) }()

	timer := time.NewTimer(redisStartTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-timer.C:
		err = fmt.Errorf("no readiness line within %s", redisStartTimeout)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("port %d: %w", port, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	srv := &RedisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	ctx, cancel := context.WithTimeout(context.Background(), redisStartTimeout)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("ping %s: %w", srv.Addr, err)
	}
	return srv, nil
}

// waitReady reads redis-server's log until it says it accepts connections,
// then keeps draining it so the server never blocks on a full pipe.
func waitReady(out io.Reader) error {
	sc := bufio.NewScanner(out)
	var tail []string
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "Ready to accept connections") {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return nil
		}
		tail = append(tail, line)
		if len(tail) > 5 {
			tail = tail[1:]
		}
	}
	return fmt.Errorf("redis-server exited before it was ready: %s", strings.Join(tail, " | "))
}
