package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// waitTimeout bounds a wait on a condition that normally holds within
// milliseconds; it only turns a hang into a failure.
const waitTimeout = 10 * time.Second

// clientSetup is an API server with a node behind it, on the embedded
// Redis and the demo model, as `brain serve` runs by default. The client
// commands' output is what these tests check, not Redis semantics (the
// end-to-end test runs a real redis-server).
type clientSetup struct {
	url     string
	commits chan store.Record
	store   *store.Store // the node's Redis, to make what the API cannot
}

func setupClient(t *testing.T) *clientSetup {
	t.Helper()
	return setupClientBehind(t, func(h http.Handler) http.Handler { return h })
}

// setupClientBehind is setupClient with front between the client and the
// API (a proxy, say).
func setupClientBehind(t *testing.T, front func(http.Handler) http.Handler) *clientSetup {
	t.Helper()
	return setupClientWith(t, front, func(*brain.Config) {})
}

// setupClientWith is setupClientBehind with the node's config edited by
// edit (its own recipes and model, say).
func setupClientWith(t *testing.T, front func(http.Handler) http.Handler, edit func(*brain.Config)) *clientSetup {
	t.Helper()
	mr := miniredis.NewMiniRedis()
	mr.ClockTTL(true)
	if err := mr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mr.Close)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	models, err := newModels(nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.New(rdb, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := &clientSetup{commits: make(chan store.Record, 64), store: st}
	cfg := brain.Config{
		Redis: rdb, NodeID: "test", ResolveModel: models.Resolve, MaxLogEvents: 100,
		OnCommit: func(rec store.Record, _ []conversation.Event) { s.commits <- rec },
	}
	edit(&cfg)
	node, err := brain.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	h, err := api.New(api.Config{Backend: node, FollowBlock: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front(h))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// brain runs a client command against the server.
func (s *clientSetup) brain(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	env := func(k string) string {
		if k == "BRAIN_URL" {
			return s.url
		}
		return ""
	}
	code = runClient(ctx, args[0], args[1:], env, &out, &errOut)
	return code, out.String(), errOut.String()
}

// mustBrain runs a command that must succeed and returns its stdout.
func (s *clientSetup) mustBrain(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := s.brain(context.Background(), args...)
	if code != 0 {
		t.Fatalf("brain %s: exit %d\nstderr: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// waitCommit waits for a turn of pid to commit with the process in state.
func (s *clientSetup) waitCommit(t *testing.T, pid string, state lifecycle.State) {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		select {
		case rec := <-s.commits:
			if rec.ID == pid && rec.Status.State == state {
				return
			}
		case <-timeout:
			t.Fatalf("no turn of %s committed %s within %s", pid, state, waitTimeout)
		}
	}
}

var created = regexp.MustCompile(`^(\S+) (READY|BLOCKED)\n$`)

// newProcess runs `brain new` and returns the id it prints.
func (s *clientSetup) newProcess(t *testing.T, args ...string) (pid, state string) {
	t.Helper()
	out := s.mustBrain(t, append([]string{"new"}, args...)...)
	m := created.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("brain new printed %q, want `ID STATE`", out)
	}
	return m[1], m[2]
}

// brain logs of a process whose log was trimmed (the embedded Redis's
// scripts trim it too) says so before the events that are left.
func TestLogsOfATrimmedLog(t *testing.T) {
	t.Parallel()
	s := setupClient(t) // the node keeps 100 events
	pid, _ := s.newProcess(t, "default", "hello")
	s.waitCommit(t, pid, lifecycle.Blocked)
	if out := s.mustBrain(t, "logs", pid); strings.Contains(out, "[trimmed]") {
		t.Fatalf("brain logs of a short log:\n%s", out)
	}
	for i := 0; ; i++ {
		out := s.mustBrain(t, "logs", "--view", "raw", pid)
		if strings.HasPrefix(out, "[trimmed] the oldest ") {
			if strings.Contains(out, "hello\n") || len(strings.Split(out, "\n")) < 100 {
				t.Errorf("brain logs of a trimmed log: the first message is still there, or fewer than 100 events:\n%s", out)
			}
			return
		}
		if i == 40 {
			t.Fatalf("after %d messages the log was not trimmed:\n%s", i, out)
		}
		s.mustBrain(t, "send", pid, fmt.Sprint("message ", i))
		s.waitCommit(t, pid, lifecycle.Blocked)
	}
}

// brain logs --json prints the log as the API gives it, one event a line:
// the raw view is every event of the log, in order.
func TestLogsAsJSON(t *testing.T) {
	t.Parallel()
	s := setupClient(t)
	pid, _ := s.newProcess(t, "default", "hello there")
	s.waitCommit(t, pid, lifecycle.Blocked)
	log, err := s.store.Log(context.Background(), pid, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var printed []conversation.Event
	for line := range strings.Lines(s.mustBrain(t, "logs", "--json", "--view", "raw", pid)) {
		var e conversation.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		printed = append(printed, e)
	}
	if len(printed) != len(log) {
		t.Fatalf("printed %d events, the log holds %d", len(printed), len(log))
	}
	for i := range log {
		if printed[i].ID != log[i].ID || printed[i].Type != log[i].Type {
			t.Errorf("event %d: %s %s, want %s %s", i, printed[i].ID, printed[i].Type, log[i].ID, log[i].Type)
		}
	}
	if printed[0].Type != conversation.TypeTurnStart && printed[0].Type != conversation.TypeInboxMessage {
		t.Errorf("the first event is %s", printed[0].Type)
	}
	user := s.mustBrain(t, "logs", "--json", pid)
	if strings.Contains(user, "[state]") || !strings.Contains(user, `"hello there"`) {
		t.Errorf("brain logs --json (user view): %s", user)
	}
}

func TestClientCommands(t *testing.T) {
	t.Parallel()
	s := setupClient(t)
	pid, state := s.newProcess(t, "default", "hello", "there")
	if state != "READY" {
		t.Errorf("created with input: state %s, want READY", state)
	}
	s.waitCommit(t, pid, lifecycle.Blocked)

	out := s.mustBrain(t, "logs", pid)
	for _, want := range []string{"user: hello there\n", "assistant: Hello! This is **brain's demo model**.\n", "  No model provider is configured"} {
		if !strings.Contains(out, want) {
			t.Errorf("brain logs lacks %q:\n%s", want, out)
		}
	}
	out = s.mustBrain(t, "logs", "--view", "raw", pid)
	for _, want := range []string{
		"inbox_message user: [user] hello there\n",
		"tool_call_request model: respond {",
		"state_change engine: RUNNING -> BLOCKED (await_user)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("brain logs --view raw lacks %q:\n%s", want, out)
		}
	}
	for line := range strings.Lines(out) {
		if !regexp.MustCompile(`^[a-z_]+( \S+)?(: .*)?\n$`).MatchString(line) {
			t.Errorf("raw line %q is not `type by: summary`", line)
		}
	}

	out = s.mustBrain(t, "ps")
	if !regexp.MustCompile(`(?m)^ID +RECIPE +STATE +OWNER +PARENT +INBOX +TOKENS +AGE$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(pid)+` +default +BLOCKED +- +- +0 +- +\d+s$`).MatchString(out) {
		t.Errorf("brain ps:\n%s", out)
	}
	if out := s.mustBrain(t, "ps", "--state", "DONE"); strings.Contains(out, pid) {
		t.Errorf("brain ps --state DONE lists the BLOCKED process:\n%s", out)
	}

	if out := s.mustBrain(t, "send", pid, "again"); strings.TrimSpace(out) == "" {
		t.Error("brain send printed no message id")
	}
	s.waitCommit(t, pid, lifecycle.Blocked)
	if out := s.mustBrain(t, "steer", pid, "be", "brief"); strings.TrimSpace(out) == "" {
		t.Error("brain steer printed no message id")
	}
	s.waitCommit(t, pid, lifecycle.Blocked)

	// Timers: arm two, list them by due time, cancel one. (The one-shot is
	// due in a minute and the cron yearly, so that they list in this order
	// whatever the time of day: "in 1h" came after "@daily" at 23:00 UTC.)
	out = s.mustBrain(t, "timers", pid, "--in", "1m", "check", "the", "build")
	soon, _, _ := strings.Cut(out, " ")
	if !strings.HasPrefix(soon, "w_") || !strings.Contains(out, " due ") {
		t.Errorf("brain timers --in: %q, want the timer's id and when it is due", out)
	}
	s.mustBrain(t, "timers", pid, "--cron", "@yearly", "yearly", "report")
	out = s.mustBrain(t, "timers", pid)
	if !regexp.MustCompile(`^ID +DUE +REPEATS +MESSAGE\n` + regexp.QuoteMeta(soon) + ` +\S+ +no +check the build\nw_\w+ +\S+ +@yearly +yearly report\n$`).MatchString(out) {
		t.Errorf("brain timers:\n%s", out)
	}
	if out := s.mustBrain(t, "timers", pid, "--cancel", soon); out != soon+" cancelled\n" {
		t.Errorf("brain timers --cancel: %q", out)
	}
	if out := s.mustBrain(t, "timers", pid); strings.Contains(out, soon) || !strings.Contains(out, "@yearly") {
		t.Errorf("brain timers after the cancel:\n%s", out)
	}

	for _, step := range []struct{ action, want string }{
		{"pause", pid + " PAUSED\n"},
		{"resume", pid + " BLOCKED\n"},
		{"stop", pid + " DONE\n"},
	} {
		if out := s.mustBrain(t, step.action, pid); out != step.want {
			t.Errorf("brain %s: %q, want %q", step.action, out, step.want)
		}
	}

	// The server's errors: one line on stderr, exit 1.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"send", pid, "hello?"}, "brain send: 409 process_closed: "},
		{[]string{"retry", pid}, "brain retry: 409 invalid_state: "},
		{[]string{"logs", "p_nope"}, `brain logs: 404 not_found: process "p_nope" not found`},
		{[]string{"new", "nonesuch"}, "brain new: 422 unknown_recipe: "},
		{[]string{"ps", "--state", "SLEEPING"}, "brain ps: 400 invalid_parameter: "},
		{[]string{"timers", pid, "--cron", "0 9 * *", "report"}, "brain timers: 422 invalid_timer: invalid cron expression"},
		{[]string{"timers", pid, "--in", "1h", "too", "late"}, "brain timers: 409 process_closed: "},
		{[]string{"timers", pid, "--cancel", "w_nope"}, `brain timers: 404 not_found: process "` + pid + `" has no timer "w_nope"`},
	} {
		code, _, stderr := s.brain(context.Background(), tt.args...)
		if code != 1 || !strings.HasPrefix(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("brain %s: exit %d, stderr %q; want 1 and one line starting %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}

	other, _ := s.newProcess(t, "default")
	// A worker of other's, BLOCKED: only a turn's spawn_worker makes one.
	worker := s.store.WorkerID(other, "p_worker") // in its parent's partition
	if _, err := s.store.Create(context.Background(), store.NewProcess{ID: worker, Recipe: "marvin-worker", Engine: "worker", Parent: other, Depth: 1}); err != nil {
		t.Fatal(err)
	}
	if out := s.mustBrain(t, "ps", "--parent", other); !strings.Contains(out, worker) || strings.Contains(out, pid) ||
		strings.Count(out, "\n") != 2 {
		t.Errorf("brain ps --parent %s:\n%s\nwant the header and %s alone", other, out, worker)
	}
	if out := s.mustBrain(t, "ps", "--recipe", "marvin-worker"); !strings.Contains(out, worker) || strings.Count(out, "\n") != 2 {
		t.Errorf("brain ps --recipe marvin-worker:\n%s\nwant the header and p_worker alone", out)
	}
	// A message waits in the inbox of a paused process.
	s.mustBrain(t, "pause", other)
	s.mustBrain(t, "send", other, "are", "you", "there?")
	if out := s.mustBrain(t, "inbox", other); !regexp.MustCompile(`^ID +KIND +FROM +AT +CONTENT\n\S+ +user +\S+ +\S+ +are you there\?\n$`).MatchString(out) {
		t.Errorf("brain inbox:\n%s", out)
	}
	if out, want := s.mustBrain(t, "rm", other, pid), other+" deleted (was PAUSED) with its workers "+worker+"\n"+pid+" deleted (was DONE)\n"; out != want {
		t.Errorf("brain rm: %q, want %q", out, want)
	}
	if code, out, stderr := s.brain(context.Background(), "rm", "p_nope", pid); code != 1 || out != "" || !strings.HasPrefix(stderr, "brain rm: 404 not_found: ") {
		t.Errorf("brain rm of missing processes: exit %d, stdout %q, stderr %q; want 404 at the first", code, out, stderr)
	}
	if code, _, stderr := s.brain(context.Background(), "logs", pid); code != 1 || !strings.HasPrefix(stderr, "brain logs: 404 not_found: ") {
		t.Errorf("brain logs of a deleted process: exit %d, stderr %q; want 404", code, stderr)
	}
}

// syncBuffer is a buffer written by one goroutine and read by another,
// which can wait until it holds a text.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the buffer holds text.
func (b *syncBuffer) waitFor(t *testing.T, text string) {
	t.Helper()
	b.waitUntil(t, func(s string) bool { return strings.Contains(s, text) })
}

// waitUntil waits until ok holds for the buffer's text.
func (b *syncBuffer) waitUntil(t *testing.T, ok func(string) bool) {
	t.Helper()
	timeout := time.After(waitTimeout)
	for !ok(b.String()) {
		select {
		case <-b.changed:
		case <-timeout:
			t.Fatalf("the condition does not hold after %s on:\n%s", waitTimeout, b.String())
		}
	}
}

func TestClientLogsFollow(t *testing.T) {
	t.Parallel()
	s := setupClient(t)
	pid, state := s.newProcess(t, "default")
	if state != "BLOCKED" {
		t.Errorf("created without input: state %s, want BLOCKED", state)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	env := func(k string) string {
		if k == "BRAIN_URL" {
			return s.url
		}
		return ""
	}
	code := make(chan int, 1)
	go func() { code <- runClient(ctx, "logs", []string{pid, "-f"}, env, out, errOut) }()

	s.mustBrain(t, "send", pid, "anyone there?")
	out.waitFor(t, "user: anyone there?\n")
	out.waitFor(t, "brain's demo model")
	cancel() // Ctrl-C
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("brain logs -f interrupted: exit %d, want 0; stderr %s", c, errOut.String())
		}
	case <-time.After(waitTimeout):
		t.Fatal("brain logs -f did not end when interrupted")
	}
	if n := strings.Count(out.String(), "user: anyone there?"); n != 1 {
		t.Errorf("the message is shown %d times, want once:\n%s", n, out.String())
	}
}

func TestClientUnreachable(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	env := func(k string) string {
		if k == "BRAIN_URL" {
			return "http://127.0.0.1:1/"
		}
		return ""
	}
	code := runClient(context.Background(), "ps", nil, env, &stdout, &stderr)
	if code != 1 || !strings.HasPrefix(stderr.String(), "brain ps: cannot reach brain at http://127.0.0.1:1: dial tcp") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestClientMisuse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"new"}, "brain new: missing RECIPE"},
		{[]string{"send"}, "brain send: missing PID and TEXT"},
		{[]string{"send", "p_1"}, "brain send: missing TEXT"},
		{[]string{"steer", "p_1", " "}, "brain steer: TEXT is empty"},
		{[]string{"logs"}, "brain logs: missing PID"},
		{[]string{"logs", "p_1", "p_2"}, `brain logs: unexpected argument "p_2"`},
		{[]string{"logs", "p_1", "--view", "json"}, `brain logs: --view "json": want user or raw`},
		{[]string{"ps", "--colour"}, "brain ps: flag provided but not defined: -colour"},
		{[]string{"ps", "all"}, `brain ps: unexpected argument "all"`},
		{[]string{"pause"}, "brain pause: missing PID"},
		{[]string{"stop", "p_1", "now"}, `brain stop: unexpected argument "now"`},
		{[]string{"rm"}, "brain rm: missing PID"},
		{[]string{"inbox"}, "brain inbox: missing PID"},
		{[]string{"timers"}, "brain timers: missing PID"},
		{[]string{"timers", "p_1", "--in", "10m"}, "brain timers: missing TEXT"},
		{[]string{"timers", "p_1", "report"}, `brain timers: unexpected argument "report" (TEXT goes with --in, --at or --cron)`},
		{[]string{"timers", "p_1", "--in", "10m", "--cancel", "w_1", "x"}, "brain timers: --cancel arms nothing: give it alone"},
		{[]string{"approvals", "p_1"}, `brain approvals: unexpected argument "p_1"`},
		{[]string{"approve"}, "brain approve: missing PID and CALL (brain approvals lists them)"},
		{[]string{"approve", "p_1"}, "brain approve: missing CALL"},
		{[]string{"approve", "p_1", "c_1", "because"}, `brain approve: unexpected argument "because" (quote the reason: --reason "...")`},
		{[]string{"reject", "p_1", "c_1"}, "brain reject: missing --reason: say why the call is rejected; the model reads it"},
		{[]string{"reject", "p_1", "c_1", "--reason", " "}, "brain reject: missing --reason"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		// No server: misuse is found before any request.
		code := runClient(context.Background(), tt.args[0], tt.args[1:], func(string) string { return "http://127.0.0.1:1" }, &stdout, &stderr)
		if code != 2 || !strings.HasPrefix(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "\nusage: brain "+tt.args[0]+" ") {
			t.Errorf("brain %s: exit %d, stderr %q; want 2 and %q with the usage", strings.Join(tt.args, " "), code, stderr.String(), tt.want)
		}
	}
}

func TestParseArgsInterspersed(t *testing.T) {
	t.Parallel()
	cc := &clientCall{name: "brain logs", stdout: &bytes.Buffer{}}
	fs := cc.flags()
	follow := fs.Bool("f", false, "")
	view := fs.String("view", "user", "")
	got, err := cc.parse(fs, []string{"p_1", "-f", "--view", "raw", "--", "-x"})
	if err != nil {
		t.Fatal(err)
	}
	if !*follow || *view != "raw" || strings.Join(got, ",") != "p_1,-x" {
		t.Errorf("follow %v, view %q, args %q", *follow, *view, got)
	}
}

func TestAge(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 0: "0s", 59 * time.Second: "59s", 90 * time.Second: "1m",
		3 * time.Hour: "3h", 47 * time.Hour: "47h", 72 * time.Hour: "3d",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%s) = %q, want %q", d, got, want)
		}
	}
}

// A worker's row names its parent; a paused process where it was paused
// from.
func TestProcessTable(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	waiting := 3
	var out bytes.Buffer
	writeProcessTable(&out, []api.Process{
		{ID: "p_chat", Recipe: "arthur", State: "PAUSED", PausedFrom: "BLOCKED", Owner: "alice", CreatedAt: now.Add(-3 * time.Hour),
			Tokens: &api.Tokens{Input: 12_345, Output: 950}, Inbox: &waiting},
		{ID: "p_work", Recipe: "marvin-worker", State: "DONE", Parent: "p_chat", CreatedAt: now.Add(-2 * time.Minute),
			Tokens: &api.Tokens{Input: 4_100_000, Output: 1000}},
		{ID: "p_new", Recipe: "default", State: "BLOCKED", Owner: "bob", CreatedAt: now.Add(-5 * time.Second)},
	}, now)
	want := "ID      RECIPE         STATE                  OWNER  PARENT  INBOX  TOKENS     AGE\n" +
		"p_chat  arthur         PAUSED (from BLOCKED)  alice  -       3      12.3k/950  3h\n" +
		"p_work  marvin-worker  DONE                   -      p_chat  -      4.1M/1.0k  2m\n" +
		"p_new   default        BLOCKED                bob    -       -      -          5s\n"
	if got := out.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

// losingFirstAnswer is a front (see setupClientBehind) that lets the first
// request matching through to the API, which serves it, and answers its
// client with status instead, as a gateway whose upstream went away.
func losingFirstAnswer(matching func(*http.Request) bool, status int) func(http.Handler) http.Handler {
	var once sync.Once
	return func(api http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			lost := false
			if matching(r) {
				once.Do(func() { lost = true })
			}
			if !lost {
				api.ServeHTTP(w, r)
				return
			}
			api.ServeHTTP(httptest.NewRecorder(), r) // served; the answer never arrives
			http.Error(w, "upstream went away", status)
		})
	}
}

// brain send delivers a message once when the answer to its first try is
// lost: the server stored the message, but the client got a 503, so it
// sends it again with the same idempotency key.
func TestSendSurvivesALostAnswer(t *testing.T) {
	t.Parallel()
	s := setupClientBehind(t, losingFirstAnswer(func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages")
	}, http.StatusServiceUnavailable))
	pid, _ := s.newProcess(t, "default", "hello")
	s.waitCommit(t, pid, lifecycle.Blocked)
	s.mustBrain(t, "send", pid, "only", "once")
	s.waitCommit(t, pid, lifecycle.Blocked)
	evs, err := s.store.Log(context.Background(), pid, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.InboxMessage != nil && e.InboxMessage.Content == "only once" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the message is in the log %d times, want once", n)
	}
}

// brain new makes one process when the answer to its first try is lost:
// it creates again with the same idempotency key.
func TestNewSurvivesALostAnswer(t *testing.T) {
	t.Parallel()
	s := setupClientBehind(t, losingFirstAnswer(func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.URL.Path == "/v1/processes"
	}, http.StatusBadGateway))
	pid, _ := s.newProcess(t, "default")
	out := s.mustBrain(t, "ps")
	if n := strings.Count(out, " default "); n != 1 || !strings.Contains(out, pid) {
		t.Errorf("brain ps lists %d processes after one brain new, want %s alone:\n%s", n, pid, out)
	}
}
