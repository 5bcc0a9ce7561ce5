package interop_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
)

// holds are the waits of the model's calls, shared by the models of all
// nodes: a call whose user message contains a hold's word waits on that
// hold's next channel (or for its context's end), so the test sees the task
// working and decides when the turn answers. A call that finds no channel
// left answers at once.
type holds struct {
	mu    sync.Mutex
	next  map[string][]chan struct{}
	taken chan string // "node word" of each call that took a channel (buffered for all of the test's)
}

func (h *holds) take(node, message string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	for word, chans := range h.next {
		if strings.Contains(message, word) && len(chans) > 0 {
			h.next[word] = chans[1:]
			h.taken <- node + " " + word
			return chans[0]
		}
	}
	return nil
}

// model answers each user message with some text and respond(message:
// "You said: …", awaiting_user_input: true), after the hold of the message
// if it has one.
type model struct {
	node  string
	holds *holds
}

var _ llm.Model = model{}

func (m model) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	var said string
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == conversation.MessageUser {
		for _, b := range req.Messages[n-1].Content {
			said += b.Text
		}
	}
	return func(yield func(llm.Part, error) bool) {
		if !yield(llm.Part{Kind: llm.PartText, Text: "Let me think."}, nil) {
			return
		}
		if wait := m.holds.take(m.node, said); wait != nil {
			select {
			case <-wait:
			case <-ctx.Done():
				yield(llm.Part{}, ctx.Err())
				return
			}
		}
		args, _ := json.Marshal(map[string]any{"message": "You said: " + lastLine(said), "awaiting_user_input": true})
		yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "c1", Name: "respond", Arguments: args}}, nil)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// line is one JSON line a2a.mjs printed.
type line struct {
	Event     string   `json:"event"`
	ID        string   `json:"id"`
	State     string   `json:"state"`
	Message   string   `json:"message"`
	ContextID string   `json:"contextId"`
	Name      string   `json:"name"`
	Skills    []string `json:"skills"`
	Streaming bool     `json:"streaming"`
	History   int      `json:"history"`
	Error     string   `json:"error"`
}

// brief is what the test compares of a status line.
func (l line) brief() string {
	return fmt.Sprintf("%s %s %s %q", l.Event, l.ID, l.State, l.Message)
}

// script runs a2a.mjs and returns its lines as they come; the channel
// closes when the script ends, after which wait reports how it ended.
type script struct {
	t     *testing.T
	ctx   context.Context
	lines chan line
	done  chan error
	seen  []string
}

func run(ctx context.Context, t *testing.T, args ...string) *script {
	t.Helper()
	node, dir := testutil.Interop(t)
	cmd := exec.CommandContext(ctx, node, append([]string{"a2a.mjs"}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &script{t: t, ctx: ctx, lines: make(chan line), done: make(chan error, 1)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				// Not t.Errorf: this goroutine may outlive a failed test.
				l = line{Event: "error", Error: fmt.Sprintf("a2a.mjs printed %q: %v", sc.Text(), err)}
			}
			select {
			case s.lines <- l:
			case <-ctx.Done():
				return
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			s.done <- &exitError{err: err, stderr: stderr.String()}
			return
		}
		s.done <- nil
	}()
	return s
}

type exitError struct {
	err    error
	stderr string
}

func (e *exitError) Error() string { return e.err.Error() + ": " + e.stderr }

// next returns the script's next line; it fails the test if the script
// ended or the deadline passed.
func (s *script) next() line {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("a2a.mjs ended (%v) after %s", <-s.done, s.seen)
		}
		s.seen = append(s.seen, l.Event+":"+l.State)
		return l
	case <-s.ctx.Done():
		s.t.Fatalf("a2a.mjs: no line before the deadline; saw %s", s.seen)
	}
	return line{}
}

// until reads lines up to the first that ok accepts.
func (s *script) until(what string, ok func(line) bool) line {
	s.t.Helper()
	for {
		l := s.next()
		if ok(l) {
			return l
		}
		if l.Event == "error" || l.Event == "broken" || l.Event == "resubscribe" {
			s.t.Fatalf("a2a.mjs: %+v while waiting for %s", l, what)
		}
	}
}

// wait reads the script's remaining lines and checks it ended well.
func (s *script) wait() []line {
	s.t.Helper()
	var rest []line
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				if err := <-s.done; err != nil {
					s.t.Fatalf("a2a.mjs: %v", err)
				}
				return rest
			}
			rest = append(rest, l)
		case <-s.ctx.Done():
			s.t.Fatalf("a2a.mjs did not end before the deadline; saw %s", s.seen)
		}
	}
}

// cluster is two nodes on one Redis, each with its own API server.
type cluster struct {
	redis   [2]*redis.Client
	nodes   [2]*brain.Node
	servers [2]*httptest.Server
	holds   *holds
}

const token = "tok-ada"

func setup(t *testing.T) *cluster {
	t.Helper()
	srv := testutil.StartRedis(t)
	c := &cluster{holds: &holds{next: map[string][]chan struct{}{}, taken: make(chan string, 16)}}
	for i, id := range []string{"a", "b"} {
		rdb := srv.Client(t)
		n, err := brain.New(brain.Config{Redis: rdb, NodeID: id, Recipes: recipes.Builtin(),
			Models:   map[string]llm.Model{"default": model{node: id, holds: c.holds}},
			LeaseTTL: time.Second, Grace: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Stop(context.Background()) })
		s, err := api.New(api.Config{Backend: n, FollowBlock: 50 * time.Millisecond, Heartbeat: 100 * time.Millisecond,
			Tokens: []api.Token{{Name: "ada", Role: api.RoleUser, SHA256: api.HashToken(token)}}})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(s)
		t.Cleanup(ts.Close)
		c.redis[i], c.nodes[i], c.servers[i] = rdb, n, ts
	}
	return c
}

// agent is the base URL of the default recipe's agent on node i.
func (c *cluster) agent(i int) string { return c.servers[i].URL + "/a2a/default/" }

// hold makes the calls for messages containing word wait on chans, in turn.
func (c *cluster) hold(word string, chans ...chan struct{}) {
	c.holds.mu.Lock()
	defer c.holds.mu.Unlock()
	c.holds.next[word] = chans
}

// taken returns the node of the next call that took a hold of word,
// skipping those of other words.
func (c *cluster) taken(ctx context.Context, t *testing.T, word string) string {
	t.Helper()
	for {
		select {
		case got := <-c.holds.taken:
			if node, w, _ := strings.Cut(got, " "); w == word {
				return node
			}
		case <-ctx.Done():
			t.Fatalf("no call took a hold of %q before the deadline", word)
		}
	}
}

// The official A2A JavaScript SDK drives brain end to end: the card, a
// task streamed through working to input-required and answered, another
// task canceled; then a node dies mid-task and the client's SubscribeToTask
// on the other node sees the task through.
func TestOfficialSDK(t *testing.T) {
	c := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Node b starts later: until node a dies, a runs every turn.
	if err := c.nodes[0].Start(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("converse", func(t *testing.T) {
		release, again, never := make(chan struct{}), make(chan struct{}), make(chan struct{})
		c.hold("hello", release)
		c.hold("how are you", again)
		c.hold("another", never)
		s := run(ctx, t, c.agent(0), token, "converse", "hello", "how are you")

		card := s.next()
		if card.Event != "card" || card.Name != "default" || !slices.Equal(card.Skills, []string{"chat"}) || !card.Streaming {
			t.Fatalf("card %+v: want default's, with the skill chat, streaming", card)
		}
		// The stream shows the task working while the model holds the turn.
		first := s.until("working", func(l line) bool { return l.State == "working" })
		id := first.ID
		if id == "" || !strings.HasPrefix(id, "p_") {
			t.Fatalf("task id %q: want a process id", id)
		}
		close(release)
		want := line{Event: "status", ID: id, State: "input-required", Message: "You said: hello"}
		if got := s.until("input-required", func(l line) bool { return l.State != "working" }); got.brief() != want.brief() {
			t.Fatalf("after working: %+v, want %+v", got, want)
		}
		// The answer's stream goes on to the next stop, with the new answer.
		if got := s.next(); got.Event != "task" || got.ID != id || got.State != "working" {
			t.Fatalf("the answer's stream starts with %+v, want task %s working", got, id)
		}
		close(again)
		want.Message = "You said: how are you"
		if got := s.until("input-required again", func(l line) bool { return l.State != "working" && l.State != "submitted" }); got.brief() != want.brief() {
			t.Fatalf("after the answer: %+v, want %+v; saw %s", got, want, s.seen)
		}
		if got := s.next(); got.Event != "get" || got.State != "input-required" || got.History != 4 {
			t.Errorf("GetTask: %+v, want input-required with 4 messages", got)
		}
		canceled := s.next()
		if canceled.Event != "canceled" || canceled.State != "canceled" || canceled.ID == id {
			t.Errorf("CancelTask: %+v, want another task, canceled", canceled)
		}
		if got := s.next(); got.Event != "get" || got.ID != canceled.ID || got.State != "canceled" {
			t.Errorf("GetTask of the canceled task: %+v, want canceled", got)
		}
		if got := s.next(); got.Event != "error" || got.Name != "TaskNotFoundError" {
			t.Errorf("GetTask of no task: %+v, want TaskNotFoundError", got)
		}
		s.wait()
	})

	t.Run("failover", func(t *testing.T) {
		never, release := make(chan struct{}), make(chan struct{})
		c.hold("failover", never, release)
		s := run(ctx, t, c.agent(0), token, "failover", "failover", c.agent(1))
		task := s.until("working", func(l line) bool { return l.State == "working" })
		if got := c.taken(ctx, t, "failover"); got != "a" {
			t.Fatalf("the held call: %q, want node a's", got)
		}
		// Node a dies mid-turn: it loses Redis (it can neither renew its
		// lease nor commit the turn) and its connections. The client's
		// stream breaks, and node b, started now, recovers the turn once
		// a's lease has expired.
		_ = c.redis[0].Close()
		c.servers[0].CloseClientConnections()
		if err := c.nodes[0].Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.nodes[1].Start(ctx); err != nil {
			t.Fatal(err)
		}
		if got := s.next(); got.Event != "broken" || got.ID != task.ID {
			t.Fatalf("after node a stopped: %+v, want the stream of %s broken", got, task.ID)
		}
		if got := s.next(); got.Event != "resubscribe" {
			t.Fatalf("after the broken stream: %+v, want a resubscribe", got)
		}
		if got := s.next(); got.Event != "task" || got.ID != task.ID || got.State != "working" {
			t.Fatalf("SubscribeToTask on node b: %+v, want task %s working", got, task.ID)
		}
		if got := c.taken(ctx, t, "failover"); got != "b" {
			t.Fatalf("the recovered call: %q, want node b's", got)
		}
		close(release)
		want := line{Event: "status", ID: task.ID, State: "input-required", Message: "You said: failover"}
		if got := s.until("input-required", func(l line) bool { return l.State != "working" }); got.brief() != want.brief() {
			t.Fatalf("after the recovery: %+v, want %+v", got, want)
		}
		s.wait()
	})
}
