package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools/mcp/mcptest"
)

// e2eTimeout bounds each wait of the end-to-end test; the whole test takes
// a few seconds once the binary is built.
const e2eTimeout = 15 * time.Second

// TestEndToEnd builds the binary, runs `brain serve` on a real
// redis-server and drives conversations through the API client and the
// CLI, then stops the server with SIGTERM.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	bin := brainBinary(t)
	rs := testutil.StartRedis(t) // skips, or fails with BRAIN_REQUIRE_REDIS=1, without redis-server

	dir := t.TempDir()
	recipeDir := filepath.Join(dir, "recipes")
	if err := os.Mkdir(recipeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, bin, dir, "--redis", "redis://"+rs.Addr, "--listen", "127.0.0.1:0", "--recipes", recipeDir)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()

	// Through the API client: input → BLOCKED with the demo answer; a
	// message → READY, RUNNING → BLOCKED again.
	c := api.NewClient(srv.url, "")
	p, err := c.CreateProcess(ctx, api.CreateRequest{Recipe: "default", Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if p.State != "READY" || p.Recipe != "default" {
		t.Errorf("created %+v, want a READY default process", p)
	}
	states, last := followUntilBlocked(ctx, t, c, p.ID, "")
	if want := []string{"RUNNING", "BLOCKED"}; !slices.Equal(states, want) {
		t.Errorf("first turn: states %v, want %v", states, want)
	}
	if _, err := c.Send(ctx, p.ID, "and now?", "e2e-1"); err != nil {
		t.Fatal(err)
	}
	states, _ = followUntilBlocked(ctx, t, c, p.ID, last)
	if want := []string{"READY", "RUNNING", "BLOCKED"}; !slices.Equal(states, want) {
		t.Errorf("after a message: states %v, want %v", states, want)
	}

	// Through the CLI.
	out := srv.brain(t, "new", "default", "hello")
	m := regexp.MustCompile(`^(\S+) READY\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("brain new printed %q, want `ID READY`", out)
	}
	pid := m[1]
	followUntilBlocked(ctx, t, c, pid, "")
	out = srv.brain(t, "logs", pid)
	for _, want := range []string{"user: hello\n", "assistant: Hello! This is **brain's demo model**.", "[state] BLOCKED\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("brain logs lacks %q:\n%s", want, out)
		}
	}
	out = srv.brain(t, "ps")
	for _, id := range []string{p.ID, pid} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + ` +default +BLOCKED `).MatchString(out) {
			t.Errorf("brain ps does not list %s as BLOCKED:\n%s", id, out)
		}
	}

	// /metrics carries the node's metrics, counted from the turns above.
	resp, err := http.Get(srv.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`brain_turns_total{outcome="await_user",recipe="default"}`, `brain_processes{state="BLOCKED"} 2`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// SIGHUP reloads the recipes: a broken file is reported and changes
	// nothing; once fixed, its recipe can be used.
	helper := filepath.Join(recipeDir, "helper.yaml")
	writeRecipe(t, recipeDir, "helper.yaml", "name: helper\nextends: default\nmax_rounds: lots\n")
	srv.hangup(t, "recipes reload failed")
	writeRecipe(t, recipeDir, "helper.yaml", "name: helper\nextends: default\ndescription: helps\n")
	srv.hangup(t, "recipes reloaded")
	if out := srv.brain(t, "new", "helper"); !strings.HasSuffix(out, " BLOCKED\n") {
		t.Errorf("brain new helper after the reload printed %q", out)
	}
	if !strings.Contains(srv.log.String(), helper+":3:") {
		t.Errorf("the failed reload is not reported at %s:3:\n%s", helper, srv.log.String())
	}

	srv.stop(t)
	// The test's redis-server keeps nothing on disk. SIGTERM makes /readyz
	// answer 503 (draining) before the node stops.
	for _, want := range []string{demoModelWarning, "redis keeps no append-only file", "shutting down", "draining", "node stopped"} {
		if !strings.Contains(srv.log.String(), want) {
			t.Errorf("the server's log lacks %q:\n%s", want, srv.log.String())
		}
	}
}

// built is the binary the end-to-end tests run, built once per test
// binary by brainBinary and removed by TestMain.
var built struct {
	once sync.Once
	dir  string // its directory
	bin  string
	skip string // why the tests that need it skip
	err  error
}

func TestMain(m *testing.M) {
	mcptest.Main() // the test binary is also the tests' MCP server
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// brainBinary builds cmd/brain on first use and returns its path. Without
// the go command on PATH the test skips.
func brainBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			built.skip = fmt.Sprintf("SKIPPED: the end-to-end tests build the binary and need the go command on PATH: %v", err)
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "brain-e2e-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "brain")
		out, err := exec.Command(goBin, "build", "-o", built.bin, "github.com/engine-brain/brain/cmd/brain").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.skip != "" {
		t.Skip(built.skip)
	}
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// serveProcess is a `brain serve` child process.
type serveProcess struct {
	bin, url string
	env      []string
	cmd      *exec.Cmd
	log      *syncBuffer   // its stderr: the log, as JSON lines
	exited   chan struct{} // closed when it has exited, with err set
	err      error
}

// startServe starts `brain serve` in dir and waits until it logs the URL
// it serves on and /readyz answers. Listening on port 0 and reading the
// address from the log leaves no window in which another process could
// take a port picked in advance, and needs no polling: the log line comes
// once the listener is bound, the node started and Redis answered.
func startServe(t *testing.T, bin, dir string, args ...string) *serveProcess {
	t.Helper()
	return startServeEnv(t, bin, dir, nil, args...)
}

// startServeEnv is startServe with env (KEY=value) added to the
// hermetic environment.
func startServeEnv(t *testing.T, bin, dir string, env []string, args ...string) *serveProcess {
	t.Helper()
	return startBrain(t, bin, dir, env, append([]string{"--log-format", "json", "serve"}, args...))
}

// startBrain is startServeEnv with the whole command line after the
// binary, which must make it serve with JSON logs.
func startBrain(t *testing.T, bin, dir string, env, argv []string) *serveProcess {
	t.Helper()
	s := &serveProcess{bin: bin, env: append(hermeticEnv(), env...), log: newSyncBuffer(), exited: make(chan struct{})}
	s.cmd = exec.Command(bin, argv...)
	s.cmd.Dir = dir // a brain.yaml there is read
	s.cmd.Env = s.env
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	var copied sync.WaitGroup
	copied.Go(func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			_, _ = s.log.Write([]byte(line + "\n"))
			var entry struct{ Msg string }
			if json.Unmarshal([]byte(line), &entry) == nil {
				if u, ok := strings.CutPrefix(entry.Msg, "serving on "); ok {
					urls <- u
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	})
	go func() {
		copied.Wait() // Wait closes the pipe: read it all first
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})

	select {
	case s.url = <-urls:
	case <-s.exited:
		t.Fatalf("brain serve exited before serving: %v\n%s", s.err, s.log.String())
	case <-time.After(e2eTimeout):
		t.Fatalf("brain serve logged no URL within %s:\n%s", e2eTimeout, s.log.String())
	}
	resp, err := http.Get(s.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %s\n%s", resp.Status, s.log.String())
	}
	return s
}

// hermeticEnv is the test's environment without BRAIN_*, OPENAI_* and
// OTEL_* variables, which would change what the binary does.
func hermeticEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BRAIN_") && !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

// brain runs a client command of the binary against the server and
// returns its stdout; it must succeed.
func (s *serveProcess) brain(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = append(s.env, "BRAIN_URL="+s.url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("brain %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// hangup sends SIGHUP and waits for the log to say want.
func (s *serveProcess) hangup(t *testing.T, want string) {
	t.Helper()
	before := strings.Count(s.log.String(), want)
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	s.log.waitUntil(t, func(log string) bool { return strings.Count(log, want) > before })
}

// stop sends SIGTERM and checks that the server exits 0.
func (s *serveProcess) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("brain serve after SIGTERM: %v, want exit 0\n%s", s.err, s.log.String())
		}
	case <-time.After(e2eTimeout):
		t.Fatalf("brain serve did not exit within %s of SIGTERM:\n%s", e2eTimeout, s.log.String())
	}
}

var errBlocked = errors.New("blocked")

// followUntilBlocked follows pid's raw log after event id after until a
// state change to BLOCKED, and returns the states it changed to and the id
// of that last event.
func followUntilBlocked(ctx context.Context, t *testing.T, c *api.Client, pid, after string) (states []string, last string) {
	t.Helper()
	err := c.Stream(ctx, pid, "raw", after, func(e conversation.Event) error {
		last = e.ID
		if sc := e.StateChange; sc != nil {
			states = append(states, sc.To)
			if sc.To == "BLOCKED" {
				return errBlocked
			}
		}
		return nil
	})
	if !errors.Is(err, errBlocked) {
		t.Fatalf("following %s until BLOCKED: %v (states %v)", pid, err, states)
	}
	return states, last
}

// With --metrics-listen, /metrics is served on its own address, and the
// API's address serves none.
func TestMetricsListen(t *testing.T) {
	t.Parallel()
	bin := brainBinary(t)
	rs := testutil.StartRedis(t)
	srv := startServe(t, bin, t.TempDir(), "--redis", "redis://"+rs.Addr, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	var metricsURL string
	for line := range strings.Lines(srv.log.String()) {
		var entry struct{ Msg string }
		if json.Unmarshal([]byte(line), &entry) == nil {
			if u, ok := strings.CutPrefix(entry.Msg, "metrics on "); ok {
				metricsURL = u
			}
		}
	}
	if metricsURL == "" {
		t.Fatalf("brain serve did not log where it serves metrics:\n%s", srv.log.String())
	}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get(metricsURL); code != http.StatusOK || !strings.Contains(body, "brain_processes") {
		t.Errorf("GET %s: %d, want 200 with the node's metrics:\n%.300s", metricsURL, code, body)
	}
	if code, _ := get(srv.url + "/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the API's address: %d, want 404", code)
	}
}

// brain serve finds its Redis through Redis Sentinel when the URL names the
// master (master_name), and runs turns there.
func TestServeThroughSentinel(t *testing.T) {
	t.Parallel()
	bin := brainBinary(t)
	master := testutil.StartRedis(t)
	sentinel := testutil.StartSentinel(t, master.Addr)
	url := "redis://" + sentinel.Addr + "/0?master_name=" + redisserver.SentinelMaster
	srv := startServe(t, bin, t.TempDir(), "--redis", url, "--listen", "127.0.0.1:0")
	if want := "master " + redisserver.SentinelMaster + " of the sentinels at " + sentinel.Addr; !strings.Contains(srv.log.String(), want) {
		t.Errorf("the log does not say %q:\n%s", want, srv.log.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	c := api.NewClient(srv.url, "")
	p, err := c.CreateProcess(ctx, api.CreateRequest{Recipe: "default", Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	followUntilBlocked(ctx, t, c, p.ID, "")
	if n, err := master.Client(t).Exists(ctx, store.Key(store.DefaultPartitions, p.ID, "proc")).Result(); err != nil || n != 1 {
		t.Errorf("the master holds %d records of the process (%v), want 1", n, err)
	}
}
