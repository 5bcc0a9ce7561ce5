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
	"github.com/engine-brain/brain/internal/redisdial"
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

// BenchmarkTurnRedisInstructions counts the instructions redis-servers
// run under callgrind (valgrind) execute for each step of a simple turn
// (see turnRunner): one redis-server ("redis"), and the three masters of
// a Redis Cluster summed ("cluster"). Unlike CPU time, the count is the
// same from run to run whatever else the machine does, so a change of a
// few percent in what the scripts cost shows; and it leaves out the
// kernel's part, the reads and writes of sockets, which falls per command
// as a busier server batches more. 192 BLOCKED processes take turns 16 at
// a time, one call after the other, as a node with concurrency 16 would
// have them (so the state indexes hold what they hold in `brain bench`);
// after three rounds to warm up, each process's turn is counted once.
//
// The cluster also reports each master's count, and, when both ran, its
// ceilings against one Redis's (as `brain bench --cluster` computes them
// from CPU time): the masters' cores at the cluster's count a turn, and
// what they serve before the busiest master is full. The dumps
// are kept under $BRAIN_CALLGRIND_DIR when set, for callgrind_annotate.
// Skipped
// without valgrind (Debian: apt-get install valgrind); slow (about a
// minute each).
func BenchmarkTurnRedisInstructions(b *testing.B) {
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s is not installed (Debian: apt-get install valgrind)", tool)
		}
	}
	var one float64 // instructions a turn on one redis-server, once measured
	b.Run("redis", func(b *testing.B) {
		dir := callgrindDir(b)
		srv, err := redisserver.Start(redisserver.Options{Wrap: callgrindIn(dir)})
		if errors.Is(err, redisserver.ErrNoBinary) {
			b.Skip(err)
		}
		if err != nil {
			b.Fatal(err)
		}
		defer srv.Close()
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
		defer rdb.Close()
		per := countTurnInstructions(b, rdb, dir, []*redisserver.Server{srv})
		one = reportInstructions(b, per)
	})
	b.Run("cluster", func(b *testing.B) {
		dir := callgrindDir(b)
		// Under valgrind a node answers the cluster bus tens of times
		// slower: a long node timeout keeps the others from failing it.
		c, err := redisserver.StartCluster(redisserver.ClusterOptions{Masters: 3, Wrap: callgrindIn(dir), NodeTimeout: time.Minute})
		if errors.Is(err, redisserver.ErrNoBinary) {
			b.Skip(err)
		}
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		rdb := redisdial.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
		defer rdb.Close()
		per := countTurnInstructions(b, rdb, dir, c.Masters)
		total := reportInstructions(b, per)
		var busiest float64
		for i, counts := range per {
			var n float64
			for _, step := range turnSteps {
				n += counts[step]
			}
			b.ReportMetric(n, fmt.Sprintf("master%d-instr/turn", i+1))
			busiest = max(busiest, n)
		}
		if one > 0 && busiest > 0 {
			b.ReportMetric(total/one, "vs-redis-instr")
			// The ceilings against one Redis's, each server a core's
			// instructions a second: the masters' cores at the cluster's
			// count a turn, and, more cautious, what they serve before
			// the busiest is full.
			b.ReportMetric(float64(len(per))*one/total, "ceiling-vs-redis")
			b.ReportMetric(one/busiest, "busiest-ceiling-vs-redis")
		}
	})
}

// callgrindDir is where the servers of b dump: a directory of its own
// under $BRAIN_CALLGRIND_DIR, kept, or a temporary one.
func callgrindDir(b *testing.B) string {
	root := os.Getenv("BRAIN_CALLGRIND_DIR")
	if root == "" {
		return b.TempDir()
	}
	dir := filepath.Join(root, strings.ReplaceAll(b.Name(), "/", "-"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}

// callgrindIn is the Wrap that runs redis-servers under callgrind, each
// dumping into dir as callgrind.out.<pid>.
func callgrindIn(dir string) []string {
	return []string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + filepath.Join(dir, "callgrind.out.%p")}
}

// countTurnInstructions makes the turns of BenchmarkTurnRedisInstructions
// on rdb, whose servers run under callgrind dumping into dir, and returns
// what each server executed a turn, by step.
func countTurnInstructions(b *testing.B, rdb redis.UniversalClient, dir string, servers []*redisserver.Server) []map[string]float64 {
	c := &clock{t: t0}
	s, err := store.New(rdb, store.Config{Clock: c.now})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	e := &env{ctx: b.Context(), rdb: rdb, s: s, clock: c, partitions: store.DefaultPartitions}
	const processes, active = 192, 16
	pids := createBlocked(b, e, processes)
	callgrind := func(command string) {
		for _, srv := range servers {
			if out, err := exec.Command("callgrind_control", command, strconv.Itoa(srv.PID())).CombinedOutput(); err != nil {
				b.Fatalf("callgrind_control %s: %v: %s", command, err, out)
			}
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
	per := make([]map[string]float64, len(servers))
	for i, srv := range servers {
		spent, err := dumpedInstructions(filepath.Join(dir, fmt.Sprintf("callgrind.out.%d", srv.PID())))
		if err != nil {
			b.Fatal(err)
		}
		per[i] = make(map[string]float64, len(spent))
		for name, n := range spent {
			per[i][name] = float64(n) / float64(counted)
		}
	}
	return per
}

// reportInstructions reports the instructions a turn of each step, summed
// over the servers, and returns their total.
func reportInstructions(b *testing.B, per []map[string]float64) float64 {
	var total float64
	for _, step := range turnSteps {
		var n float64
		for _, counts := range per {
			n += counts[step]
		}
		total += n
		b.ReportMetric(n, step+"-instr/turn")
	}
	b.ReportMetric(total, "redis-instr/turn")
	return total
}

// timeDriven are the functions of redis-server whose work is paced by the
// clock, not by commands: serverCron (which among others asks jemalloc for
// its statistics, half a million instructions, ten times a second) and,
// in a cluster, the handling of the cluster bus's gossip. Under valgrind a
// step takes a hundred times its wall time, so what they do in it says
// nothing of what a turn costs; dumpedInstructions leaves them out. (What
// they cost an idle deployment, `brain bench` measures.)
var timeDriven = map[string]bool{"serverCron": true, "clusterReadHandler": true}

// dumpedInstructions sums the instructions of the callgrind dumps made
// with --dump=<name> next to out (out.1, out.2, ...), by name, without
// the time-driven ones (the inclusive cost of the calls to timeDriven).
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
		var total, clocked int64
		// Function names are compressed: "cfn=(id) name" defines id,
		// "cfn=(id)" names it again. A call's inclusive cost is the last
		// field of the line after its "calls=" line.
		names := map[string]string{}
		var callee string
		var costNext bool
		for line := range strings.Lines(string(data)) {
			line = strings.TrimSpace(line)
			if costNext {
				costNext = false
				if timeDriven[callee] {
					fields := strings.Fields(line)
					n, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
					if err != nil {
						return nil, fmt.Errorf("%s: the cost of a call to %s: %w", f, callee, err)
					}
					clocked += n
				}
				continue
			}
			switch {
			case strings.HasPrefix(line, "fn=") || strings.HasPrefix(line, "cfn="):
				_, ref, _ := strings.Cut(line, "=")
				id, fn, _ := strings.Cut(ref, " ")
				if fn != "" {
					names[id] = fn
				}
				if strings.HasPrefix(line, "cfn=") {
					callee = names[id]
				}
			case strings.HasPrefix(line, "calls="):
				costNext = true
			case strings.HasPrefix(line, "desc: Trigger: "):
				_, name, _ = strings.Cut(strings.TrimPrefix(line, "desc: Trigger: "), "dump ")
			case strings.HasPrefix(line, "summary: "):
				total, _ = strconv.ParseInt(strings.TrimPrefix(line, "summary: "), 10, 64)
			}
		}
		if name == "" || total == 0 {
			return nil, fmt.Errorf("%s: no dump name or no instruction total", f)
		}
		sums[name] += total - clocked
	}
	return sums, nil
}
