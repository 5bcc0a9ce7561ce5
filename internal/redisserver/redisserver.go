// Package redisserver starts a throwaway redis-server on a free loopback
// port: for tests (through testutil) and for `brain bench`.
package redisserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoBinary says that no redis-server binary was found.
var ErrNoBinary = errors.New("redisserver: redis-server binary not found on PATH")

// startTimeout bounds how long a redis-server may take to say it is ready;
// it only guards against a hung start.
const startTimeout = 20 * time.Second

// Server is a running redis-server. Its working directory is a fresh
// temporary one, removed by Close, so whatever it writes (an append-only
// file) goes there.
type Server struct {
	Addr  string
	args  []string // the command that runs it
	ready string   // the line of its log that says it is ready
	cmd   *exec.Cmd
	dir   string
	// stopped says that Close or Shutdown stopped the server and no
	// Relaunch started it again since.
	stopped atomic.Bool
}

// readyLine is what a redis-server logs once it takes connections.
const readyLine = "Ready to accept connections"

// Options say how to run a server. The zero value keeps nothing on disk.
type Options struct {
	// AppendOnly turns the append-only file on, fsynced every second, as a
	// production Redis that must survive its own crash runs.
	AppendOnly bool
	// Wrap, when given, is a command that runs the server: redis-server
	// and its arguments follow it (a profiler, such as valgrind).
	Wrap []string
	// ReplicaOf, when given (host:port), makes the server a replica of
	// that one.
	ReplicaOf string
	// ConfigFile, when given, is a redis.conf the server reads: what it
	// says about persistence holds (AppendOnly is ignored), while the port,
	// address, directory and logging are still the throwaway server's.
	ConfigFile string
}

// Binary returns the path of the redis-server binary, or ErrNoBinary.
func Binary() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	// Debian puts it in /usr/bin, but some images leave /usr/sbin off PATH.
	for _, p := range []string{"/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBinary
}

// Start starts a redis-server on a free loopback port and waits until it
// answers. Close stops it.
func Start(opts Options) (*Server, error) {
	return start(opts, "brain-redis-", nil)
}

// start starts a redis-server as Start does, in a directory named after
// prefix; more, when given, gives arguments of its own to add for the
// port and directory that it is tried on.
func start(opts Options, prefix string, more func(port, dir string) ([]string, error)) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	var replicaOf []string
	if opts.ReplicaOf != "" {
		host, port, err := net.SplitHostPort(opts.ReplicaOf)
		if err != nil {
			return nil, fmt.Errorf("redisserver: ReplicaOf %q: %w", opts.ReplicaOf, err)
		}
		replicaOf = []string{"--replicaof", host, port}
	}
	s, err := onFreePort(prefix, func(port, dir string) ([]string, string, error) {
		args := append(append([]string{}, opts.Wrap...), bin)
		if opts.ConfigFile != "" {
			args = append(args, opts.ConfigFile)
		} else {
			appendOnly := "no"
			if opts.AppendOnly {
				appendOnly = "yes"
			}
			args = append(args, "--save", "", "--appendonly", appendOnly, "--appendfsync", "everysec")
		}
		// A replica's first sync starts at once (by default a master waits
		// 5 s for more replicas to share it).
		args = append(append(args, replicaOf...), "--port", port, "--bind", "127.0.0.1", "--dir", dir,
			"--logfile", "", "--daemonize", "no", "--repl-diskless-sync-delay", "0")
		if more != nil {
			extra, err := more(port, dir)
			if err != nil {
				return nil, "", err
			}
			args = append(args, extra...)
		}
		return args, readyLine, nil
	})
	if err != nil {
		return nil, fmt.Errorf("redisserver: cannot start redis-server: %w", err)
	}
	return s, nil
}

// onFreePort starts a server on a free loopback port with a fresh
// directory (named after prefix): command gives what runs it there and the
// line of its log that says it is ready. A port found free can be taken
// before the server binds it, so it tries a few.
func onFreePort(prefix string, command func(port, dir string) (args []string, ready string, err error)) (*Server, error) {
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", prefix)
		if err != nil {
			return nil, err
		}
		p := strconv.Itoa(port)
		args, ready, err := command(p, dir)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", p), args: args, ready: ready, dir: dir}
		if err := s.launch(); err != nil {
			_ = os.RemoveAll(dir)
			lastErr = fmt.Errorf("port %d: %w", port, err)
			continue
		}
		return s, nil
	}
	return nil, lastErr
}

// PID is the process id of the server (of Wrap's command, when given).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Freeze stops the server's process without closing its connections
// (SIGSTOP), as a server that hangs: a replica frozen so stays connected
// to its master but acknowledges nothing. Thaw lets it go on; Close
// works on a frozen server too.
func (s *Server) Freeze() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw lets a frozen server go on (SIGCONT).
func (s *Server) Thaw() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.stopped.Store(true)
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// SentinelMaster is the name under which a Sentinel of StartSentinel
// monitors its master.
const SentinelMaster = "mymaster"

// StartSentinel starts a Redis Sentinel on a free loopback port that
// monitors the server at master (host:port) as SentinelMaster, with a
// quorum of one, and waits until it does.
func StartSentinel(master string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(master)
	if err != nil {
		return nil, fmt.Errorf("redisserver: sentinel of %q: %w", master, err)
	}
	s, err := onFreePort("brain-sentinel-", func(p, dir string) ([]string, string, error) {
		// Sentinel rewrites its config file: it must be its own.
		conf := filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(conf, fmt.Appendf(nil, "sentinel monitor %s %s %s 1\n", SentinelMaster, host, port), 0o600); err != nil {
			return nil, "", err
		}
		return []string{bin, conf, "--sentinel", "--port", p, "--bind", "127.0.0.1", "--dir", dir, "--logfile", "", "--daemonize", "no"},
			"+monitor master " + SentinelMaster, nil
	})
	if err != nil {
		return nil, fmt.Errorf("redisserver: cannot start a sentinel: %w", err)
	}
	return s, nil
}

// Shutdown stops the server as an operator would (SIGTERM: it writes its
// append-only file out and exits); Relaunch starts it again.
func (s *Server) Shutdown() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("redisserver: shutdown: %w", err)
	}
	s.stopped.Store(true)
	_ = s.cmd.Wait()
	return nil
}

// Relaunch starts a server that Shutdown stopped again, on the same port
// and directory, so that clients find it where it was, with what it kept
// on disk.
func (s *Server) Relaunch() error {
	if err := s.launch(); err != nil {
		return fmt.Errorf("redisserver: relaunch on %s: %w", s.Addr, err)
	}
	return nil
}

// launch runs the server with s.args and waits until it answers; a server
// that does not is killed.
func (s *Server) launch() error {
	cmd := exec.Command(s.args[0], s.args[1:]...)
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	ready := make(chan error, 1)
	go func() { ready <- waitReady(out, s.ready) }()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-timer.C:
		err = fmt.Errorf("no readiness line within %s", startTimeout)
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		c := redis.NewClient(&redis.Options{Addr: s.Addr})
		err = c.Ping(ctx).Err()
		_ = c.Close()
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	s.stopped.Store(false)
	return nil
}

// waitReady reads redis-server's log until it logs ready, then keeps
// draining it so the server never blocks on a full pipe.
func waitReady(out io.Reader, ready string) error {
	sc := bufio.NewScanner(out)
	var tail []string
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, ready) {
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
