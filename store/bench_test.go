package store_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// BenchmarkPost measures one Post: a script run, one round trip.
func BenchmarkPost(b *testing.B) {
	b.Run("READY queued", func(b *testing.B) {
		e := setup(b)
		in := user("hi")
		e.create(b, "p1", &in)
		// The inbox grows with every post: a limit it never reaches, so
		// that the check is measured and no post refused.
		s, err := store.New(e.rdb, store.Config{Clock: e.clock.now, InboxLimit: math.MaxInt32})
		if err != nil {
			b.Fatal(err)
		}
		m := user("more")
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := s.Post(e.ctx, "p1", m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("BLOCKED process_event", func(b *testing.B) {
		e := setup(b)
		e.create(b, "p1", nil)
		m := msg(conversation.KindProcessEvent, "p_w", "result")
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := e.s.Post(e.ctx, "p1", m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTurn measures a simple turn as a node runs it: Claim (drain of
// one message), one Checkpoint, Commit; three round trips. Each iteration
// takes a fresh process, so the log the claim returns stays small.
func BenchmarkTurn(b *testing.B) {
	e := setup(b)
	for i := range b.N {
		in := user("hello")
		if _, err := e.s.Create(e.ctx, store.NewProcess{ID: fmt.Sprintf("p%d", i), Recipe: "r", Engine: engine, Input: &in}); err != nil {
			b.Fatal(err)
		}
	}
	var wakes []store.Wake
	for len(wakes) < b.N {
		ws, err := e.s.ReadWakes(e.ctx, "n1", []string{engine}, 1000, time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		wakes = append(wakes, ws...)
	}
	round := []conversation.Event{chat("thinking")}
	answer := []conversation.Event{chat("hello to you")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		c, err := e.s.Claim(e.ctx, wakes[i], "n1", "t1")
		if err != nil {
			b.Fatal(err)
		}
		if err := e.s.Checkpoint(e.ctx, c, round); err != nil {
			b.Fatal(err)
		}
		if _, err := e.s.Commit(e.ctx, c, answer, lifecycle.AwaitUser, "model", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// turnSteps are the steps of a simple turn, as a node makes them.
var turnSteps = []string{"post", "wake", "claim", "checkpoint", "commit"}

// A turnRunner makes simple turns of BLOCKED processes as a node does, step
// by step for a batch of processes at once: a user message (Post), its
// wake read, Claim, a checkpoint of a tool round that drains what steers the
// turn (Steer), Commit of the answer. It
// keeps what a node keeps of each process: the last event id it has and
// the record its last commit returned.
type turnRunner struct {
	e          *env
	goroutines int // the calls of a step made at once
	mu         sync.Mutex
	known      map[string]string
	kept       map[string]*store.Record
	turns      int
}

func newTurnRunner(e *env, goroutines int) *turnRunner {
	return &turnRunner{e: e, goroutines: goroutines, known: map[string]string{}, kept: map[string]*store.Record{}}
}

var (
	benchRound = []conversation.Event{
		conversation.NewToolCallRequest("c1", "tell_user", []byte(`{"message":"Working on it."}`)),
		conversation.NewToolCallResponse("c1", "tell_user", []conversation.Block{
			conversation.MarkdownBlock("Working on it.").For(conversation.RoleUser),
			conversation.TextBlock("Message shown to user.").For(conversation.RoleAssistant)}, false),
	}
	benchAnswer = []conversation.Event{
		conversation.NewToolCallRequest("c2", "respond", []byte(`{"message":"Done.","awaiting_user_input":true}`)),
	}
)

// batch makes one turn of each of pids, calling step with each step; then,
// outside every step, it trims the wake queue as a node does meanwhile.
func (r *turnRunner) batch(b *testing.B, pids []string, step func(name string, f func())) {
	e := r.e
	all := func(n int, f func(i int) error) {
		var wg sync.WaitGroup
		for g := range r.goroutines {
			wg.Go(func() {
				for i := g; i < n; i += r.goroutines {
					if err := f(i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
	}
	step("post", func() {
		all(len(pids), func(i int) error {
			_, _, err := e.s.Post(e.ctx, pids[i], user(fmt.Sprintf("message %d", r.turns)))
			return err
		})
	})
	var wakes []store.Wake
	step("wake", func() {
		for len(wakes) < len(pids) {
			ws, err := e.s.ReadWakes(e.ctx, "n1", []string{engine}, len(pids), time.Millisecond)
			if err != nil {
				b.Fatal(err)
			}
			wakes = append(wakes, ws...)
		}
	})
	claims := make([]*store.Claim, len(wakes))
	step("claim", func() {
		all(len(wakes), func(i int) error {
			r.mu.Lock()
			after, rec := r.known[wakes[i].PID], r.kept[wakes[i].PID]
			r.mu.Unlock()
			c, err := e.s.ClaimAfter(e.ctx, wakes[i], "n1", fmt.Sprintf("t%d", r.turns), after, rec)
			claims[i] = c
			return err
		})
	})
	step("checkpoint", func() {
		all(len(claims), func(i int) error { // a round that does not end the turn, drained as a node does
			_, err := e.s.Steer(e.ctx, claims[i], benchRound, conversation.KindOperator)
			return err
		})
	})
	step("commit", func() {
		all(len(claims), func(i int) error {
			c := claims[i]
			rec, err := e.s.Commit(e.ctx, c, benchAnswer, lifecycle.AwaitUser, "model", nil)
			if err != nil {
				return err
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.kept[c.Wake.PID] = &rec
			r.known[c.Wake.PID] = ""
			if c.Gapless && len(c.Appended) > 0 {
				r.known[c.Wake.PID] = c.Appended[len(c.Appended)-1].ID
			}
			return nil
		})
	})
	if err := e.s.TrimWakes(e.ctx, []string{engine}); err != nil {
		b.Fatal(err)
	}
	r.turns += len(pids)
}

// createBlocked creates n BLOCKED processes and returns their ids.
func createBlocked(b *testing.B, e *env, n int) []string {
	pids := make([]string, n)
	for i := range pids {
		pids[i] = fmt.Sprintf("p%d", i)
		e.create(b, pids[i], nil)
	}
	return pids
}

// BenchmarkTurnServerCPU measures what simple turns cost the Redis server,
// step by step (see turnRunner), made as a node's concurrent turns make
// them: 400 BLOCKED processes, 16 goroutines at a time, every process one
// turn per iteration. It reports the server's CPU time (INFO cpu of the
// benchmark's own redis-server) per turn for each step; ns/op is the wall
// time of an iteration (400 turns). BenchmarkTurnRedisInstructions counts
// the same without the noise of CPU time.
func BenchmarkTurnServerCPU(b *testing.B) {
	e := setup(b)
	pids := createBlocked(b, e, 400)
	r := newTurnRunner(e, 16)
	spent := make(map[string]time.Duration)
	step := func(name string, f func()) {
		before, err := redisinfo.ServerCPU(e.ctx, e.rdb)
		if err != nil {
			b.Fatal(err)
		}
		f()
		after, err := redisinfo.ServerCPU(e.ctx, e.rdb)
		if err != nil {
			b.Fatal(err)
		}
		spent[name] += after - before
	}
	for b.Loop() {
		r.batch(b, pids, step)
	}
	var total time.Duration
	for _, name := range turnSteps {
		total += spent[name]
		b.ReportMetric(float64(spent[name].Microseconds())/float64(r.turns), name+"-µs/turn")
	}
	b.ReportMetric(float64(total.Microseconds())/float64(r.turns), "server-µs/turn")
}

// BenchmarkTurnRedisInstructions counts the instructions a redis-server
// run under callgrind (valgrind) executes for each step of a simple turn
// (see turnRunner). Unlike CPU time, the count is the same from run to run
// whatever else the machine does, so a change of a few percent in what the
// scripts cost shows. 192 BLOCKED processes take turns 16 at a time, one
// call after the other, as a node with concurrency 16 would have them (so
// the state indexes hold what they hold in `brain bench`); after three
// rounds to warm up, each process's turn is counted once. Skipped without
// valgrind (Debian: apt-get install valgrind); slow (about a minute).
func BenchmarkTurnRedisInstructions(b *testing.B) {
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s is not installed (Debian: apt-get install valgrind)", tool)
		}
	}
	out := filepath.Join(b.TempDir(), "callgrind.out")
	srv, err := redisserver.Start(redisserver.Options{Wrap: []string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + out}})
	if errors.Is(err, redisserver.ErrNoBinary) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	c := &clock{t: t0}
	s, err := store.New(rdb, store.Config{Clock: c.now})
	if err != nil {
		b.Fatal(err)
	}
	e := &env{ctx: b.Context(), rdb: rdb, s: s, clock: c}
	const processes, active = 192, 16
	pids := createBlocked(b, e, processes)
	callgrind := func(command string) {
		if out, err := exec.Command("callgrind_control", command, strconv.Itoa(srv.PID())).CombinedOutput(); err != nil {
			b.Fatalf("callgrind_control %s: %v: %s", command, err, out)
		}
	}
	var counted int
	for b.Loop() {
		r := newTurnRunner(e, 1)
		for round := range 4 {
			for i := 0; i < processes; i += active {
				step := func(name string, f func()) { f() }
				if round == 3 {
					step = func(name string, f func()) {
						callgrind("--zero")
						f()
						callgrind("--dump=" + name)
					}
				}
				r.batch(b, pids[i:i+active], step)
			}
		}
		counted += processes
	}
	spent, err := dumpedInstructions(out)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, name := range turnSteps {
		total += spent[name]
		b.ReportMetric(float64(spent[name])/float64(counted), name+"-instr/turn")
	}
	b.ReportMetric(float64(total)/float64(counted), "redis-instr/turn")
}

// dumpedInstructions sums the instructions of the callgrind dumps made
// with --dump=<name> next to out (out.1, out.2, ...), by name.
func dumpedInstructions(out string) (map[string]int64, error) {
	files, err := filepath.Glob(out + ".*")
	if err != nil {
		return nil, err
	}
	sums := make(map[string]int64)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var name string
		var n int64
		for line := range strings.Lines(string(data)) {
			line = strings.TrimSpace(line)
			if rest, ok := strings.CutPrefix(line, "desc: Trigger: "); ok {
				_, name, _ = strings.Cut(rest, "dump ")
			}
			if rest, ok := strings.CutPrefix(line, "summary: "); ok {
				n, _ = strconv.ParseInt(rest, 10, 64)
			}
		}
		if name == "" || n == 0 {
			return nil, fmt.Errorf("%s: no dump name or no instruction total", f)
		}
		sums[name] += n
	}
	return sums, nil
}
