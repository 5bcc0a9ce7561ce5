package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

// The node keeps the logs of the processes it ran and reads only what is
// new: the model must still see the whole conversation, turn after turn.
func TestKeptHistoryShowsTheWholeConversation(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCommits()
	model := nodetest.Script(t, `
turns:
  - rounds: [{calls: [{name: respond, args: {message: "one"}}]}]
  - rounds: [{calls: [{name: respond, args: {message: "two"}}]}]
  - rounds: [{calls: [{name: respond, args: {message: "three"}}]}]
`)
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.Add})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	// turns counts the committed turns of the process.
	turns := func() int {
		k := 0
		for _, r := range c.Records() {
			if r.ID == rec.ID {
				k++
			}
		}
		return k
	}
	for i, msg := range []string{"second", "third"} {
		c.Wait(t, "a turn", func(store.Record) bool { return turns() == i+1 })
		if _, err := n.Send(ctx, rec.ID, "user:ada", msg, ""); err != nil {
			t.Fatal(err)
		}
	}
	c.Wait(t, "the third answer", func(store.Record) bool { return turns() == 3 })
	reqs := model.Requests()
	full, err := n.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := reqs[len(reqs)-1].Messages
	// The last request saw everything but the final respond pair.
	want := conversation.ProviderView(full)
	want = want[:len(want)-2]
	if diff := cmp.Diff(want, last); diff != "" {
		t.Fatalf("the third turn's model request differs from the log (-log +request):\n%s", diff)
	}
	// The node kept the turn's own writes too: the next claim reads none of
	// them back.
	if got, want := lastKept(n, rec.ID), full[len(full)-1].ID; got != want {
		t.Errorf("the kept log ends at %s, the log at %s", got, want)
	}
}

// A kept log can be evicted, to make room for another process's, after a
// claim asked only for what follows it: the turn then reads the log back
// (this short one whole) instead of giving up (which left the process to wait for its lease to
// expire).
func TestKeptHistoryEvictedAfterTheClaim(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCommits()
	model := nodetest.Script(t, `
turns:
  - rounds: [{calls: [{name: respond, args: {message: "one"}}]}]
`)
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.Add, HistoryCache: 1})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "first"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the first turn", func(r store.Record) bool { return r.ID == rec.ID })
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Send(ctx, rec.ID, "user:ada", "second", ""); err != nil {
		t.Fatal(err)
	}
	wakes, err := n.store.ReadWakes(ctx, "n2", []string{"chat"}, 1, time.Millisecond)
	if err != nil || len(wakes) != 1 {
		t.Fatalf("ReadWakes = %v, %v; want the second message's wake", wakes, err)
	}
	known, kept := n.histories.known(rec.ID)
	if known == "" || kept == nil {
		t.Fatalf("the first turn's log (%q) or record (%v) is not kept", known, kept)
	}
	claim, err := n.store.ClaimAfter(ctx, wakes[0], "n2", "t2", known, kept)
	if err != nil {
		t.Fatal(err)
	}
	n.histories.extend("p_other", "", nil) // the cache holds one log: this evicts the process's
	history, omitted, err := n.turnHistory(ctx, claim, kept, 1000)
	if err != nil || omitted {
		t.Fatalf("turnHistory after the kept log was evicted: omitted %v, %v; want the short log whole", omitted, err)
	}
	full, err := n.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full[:len(full)-len(claim.Current)], history); diff != "" {
		t.Errorf("history (-the log before the turn +read):\n%s", diff)
	}
	if got := lastKept(n, rec.ID); got != lastID(history) {
		t.Errorf("kept log ends at %q, want %q: read whole, it is kept again", got, lastID(history))
	}
}

// A node that has none of a long log reads back only as much of it as a
// model call can be shown, from a turn's start, and tells the model that
// the beginning is left out; the call shows the newest exchanges, as the
// whole log would.
func TestLongLogIsReadBackToTheWindow(t *testing.T) {
	t.Parallel()
	const turns, window = 120, 20000
	answer := strings.Repeat("All is well. ", 120) // about 500 tokens a turn
	model := nodetest.Script(t, fmt.Sprintf(`
turns:
  - rounds:
      - calls: [{name: respond, args: {message: %q, awaiting_user_input: true}}]
`, answer))
	models := map[string]llm.Model{"default": llm.WithContextTokens(model, window)}
	redisSrv := testutil.StartRedis(t)
	c := nodetest.NewCommits()
	a := startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "a", Models: models, OnCommit: c.Add})
	ctx := context.Background()
	rec, err := a.Create(ctx, NewProcess{Recipe: "ford", Input: "question 0"})
	if err != nil {
		t.Fatal(err)
	}
	answered := func(n int) func(store.Record) bool {
		return func(store.Record) bool { return len(c.Records()) >= n }
	}
	c.Wait(t, "the first answer", answered(1))
	for i := 1; i < turns; i++ {
		if _, err := a.Send(ctx, rec.ID, "user:ada", fmt.Sprint("question ", i), ""); err != nil {
			t.Fatal(err)
		}
		c.Wait(t, fmt.Sprint("answer ", i), answered(i+1))
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	b := startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "b", Models: models, OnCommit: c.Add})
	if _, err := b.Send(ctx, rec.ID, "user:ada", fmt.Sprint("question ", turns), ""); err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "node b's answer", answered(turns+1))

	reqs := model.Requests()
	shown := reqs[len(reqs)-1].Messages
	if len(shown) == 0 || len(shown[0].Content) == 0 || shown[0].Content[0].Text != conversation.OmittedNote {
		t.Fatal("node b's call does not begin with the omitted note")
	}
	var questions []string
	for _, m := range shown {
		if m.Role == conversation.MessageUser {
			questions = append(questions, m.Content[len(m.Content)-1].Text)
		}
	}
	if tokens := conversation.ViewTokens(shown); tokens > window || len(questions) < 20 {
		t.Errorf("node b showed %d tokens and %d questions; want at most %d tokens, 20 questions or more", tokens, len(questions), window)
	}
	for i, q := range questions {
		if want := fmt.Sprint("question ", turns-len(questions)+1+i); q != want {
			t.Fatalf("question %d shown is %q, want %q: the newest exchanges in order", i, q, want)
		}
	}
	full, err := b.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := b.histories.grow(rec.ID, lastKept(b, rec.ID), nil, false)
	t.Logf("kept %d of %d events; showed %d questions, %d tokens; a's last call showed %d messages", len(kept), len(full), len(questions), conversation.ViewTokens(shown), len(reqs[len(reqs)-2].Messages))
	if len(kept) == 0 || len(kept) >= len(full)/2 || kept[0].Type != conversation.TypeTurnStart {
		t.Errorf("node b keeps %d of the log's %d events; want a turn's start and on, less than half", len(kept), len(full))
	}
}

// A recipe's limits.max_log_events bounds what a process's log keeps in
// Redis: each commit trims the oldest events; the model is told the
// beginning is left out and is shown whole turns; and a node whose kept log
// another node's commit trimmed past reads the log back, rather than
// joining its kept events to what is left with a gap between.
func TestLogIsTrimmedToTheRecipe(t *testing.T) {
	t.Parallel()
	const keep = 100 // testdata/recipes/brief.yaml
	model := nodetest.Script(t, `
turns:
  - rounds:
      - calls: [{name: tell_user, args: {message: "Looking."}}]
      - calls: [{name: respond, args: {message: "Found it.", awaiting_user_input: true}}]
`)
	models := map[string]llm.Model{"default": model}
	redisSrv := testutil.StartRedis(t)
	c := nodetest.NewCommits()
	ctx := context.Background()
	start := func(id string) *Node {
		return startNode(t, Config{Redis: redisSrv.Client(t), NodeID: id, Models: models, Recipes: testRecipes(t), OnCommit: c.Add})
	}
	a := start("a")
	rec, err := a.Create(ctx, NewProcess{Recipe: "brief", Input: "question 0"})
	if err != nil {
		t.Fatal(err)
	}
	asked := 1
	ask := func(n *Node, until func(store.Record) bool) {
		t.Helper()
		for {
			c.Wait(t, fmt.Sprint("answer ", asked-1), func(store.Record) bool { return len(c.Records()) >= asked })
			if recs := c.Records(); until(recs[len(recs)-1]) {
				return
			}
			if _, err := n.Send(ctx, rec.ID, "user:ada", fmt.Sprint("question ", asked), ""); err != nil {
				t.Fatal(err)
			}
			asked++
		}
	}
	// Node a until its commits trimmed the log, and once more: it keeps the
	// log of a turn that did not trim.
	ask(a, func(r store.Record) bool { return r.Trimmed > 0 })
	ask(a, func(r store.Record) bool { return lastKept(a, rec.ID) != "" })
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	known, kept := a.histories.known(rec.ID)
	if kept == nil {
		t.Fatal("node a keeps no record with its log")
	}

	// Node b until the log no longer holds what node a kept last.
	b := start("b")
	ask(b, func(store.Record) bool {
		first, err := b.Log(ctx, rec.ID, "", 1)
		return err == nil && len(first) == 1 && first[0].ID > known
	})
	log, err := b.Log(ctx, rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := c.Records()[len(c.Records())-1]
	if len(log) < keep || len(log) > 2*keep || last.Trimmed == 0 {
		t.Errorf("after %d turns the log holds %d events, %d trimmed; want at least %d, not many more", asked, len(log), last.Trimmed, keep)
	}
	if k, _ := b.histories.grow(rec.ID, lastKept(b, rec.ID), nil, false); len(k) > 0 && k[0].ID < log[0].ID {
		t.Errorf("node b keeps the event %s, trimmed from the log", k[0].ID)
	}
	reqs := model.Requests()
	shown := reqs[len(reqs)-1].Messages
	if len(shown) == 0 || len(shown[0].Content) < 2 || shown[0].Content[0].Text != conversation.OmittedNote ||
		!strings.HasPrefix(shown[0].Content[1].Text, "question ") {
		t.Fatalf("node b's last call does not begin with the omitted note and a question (a whole turn): %+v", shown[:min(1, len(shown))])
	}
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// Node a's next turn, with the log it kept: read back, not joined.
	if _, err := b.Send(ctx, rec.ID, "user:ada", "once more", ""); err != nil {
		t.Fatal(err)
	}
	wakes, err := a.store.ReadWakes(ctx, "a", []string{"chat"}, 1, time.Millisecond)
	if err != nil || len(wakes) != 1 {
		t.Fatalf("ReadWakes = %v, %v; want the message's wake", wakes, err)
	}
	claim, err := a.store.ClaimAfter(ctx, wakes[0], "a", "", known, kept)
	if err != nil {
		t.Fatal(err)
	}
	history, omitted, err := a.turnHistory(ctx, claim, kept, 100000)
	if err != nil || !omitted {
		t.Fatalf("node a's history: omitted %v, %v; want the trimmed log, omitted", omitted, err)
	}
	if len(history) == 0 || history[0].Type != conversation.TypeTurnStart || history[0].ID < log[0].ID {
		t.Errorf("node a's history starts with %s %s; want a turn's start in the log as it is (from %s)",
			history[0].Type, history[0].ID, log[0].ID)
	}
	if err := a.store.Release(ctx, claim); err != nil {
		t.Fatal(err)
	}
}

// The node's MaxLogEvents bounds the logs of processes whose recipe sets
// no limits.max_log_events; a recipe's own bound wins.
func TestNodeMaxLogEvents(t *testing.T) {
	t.Parallel()
	model := nodetest.Script(t, `
turns:
  - rounds:
      - calls: [{name: tell_user, args: {message: "Looking."}}]
      - calls: [{name: respond, args: {message: "Found it.", awaiting_user_input: true}}]
`)
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Recipes: testRecipes(t),
		MaxLogEvents: 150, OnCommit: c.Add})
	ctx := context.Background()
	last := make(map[string]store.Record)
	var pids []string
	for _, recipe := range []string{"default", "brief"} { // brief keeps 100
		rec, err := n.Create(ctx, NewProcess{Recipe: recipe, Input: "question"})
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, rec.ID)
	}
	for turn := 0; last[pids[0]].Trimmed == 0 || last[pids[1]].Trimmed == 0; turn++ {
		if turn == 100 {
			t.Fatalf("after %d turns: %d and %d events trimmed; want both logs trimmed", turn, last[pids[0]].Trimmed, last[pids[1]].Trimmed)
		}
		for _, pid := range pids {
			if turn > 0 {
				if _, err := n.Send(ctx, pid, "user:ada", "again", ""); err != nil {
					t.Fatal(err)
				}
			}
			want := last[pid].Version + 1
			c.Wait(t, "an answer", func(r store.Record) bool {
				if r.ID == pid && r.Status.State == lifecycle.Blocked && r.Version > want {
					last[pid] = r
					return true
				}
				return false
			})
		}
	}
	for i, bounds := range [][2]int{{150, 200}, {100, 150}} {
		log, err := n.Log(ctx, pids[i], "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) < bounds[0] || len(log) >= bounds[1] {
			t.Errorf("the log of a process of %s holds %d events; want %d or more, fewer than %d", last[pids[i]].Recipe, len(log), bounds[0], bounds[1])
		}
	}
}

// Trimmed logs across nodes that keep them: processes whose recipe keeps
// 100 events take their turns on any of three nodes, so a node's kept log
// is often older than the log's last trim. Every model call must still be
// shown its process's messages in order, without a gap or a repeat, and
// each message must be in the log once.
func TestTrimmedLogsAcrossNodes(t *testing.T) {
	t.Parallel()
	const processes, messages = 4, 30
	model := nodetest.Script(t, `
turns:
  - rounds:
      - calls: [{name: tell_user, args: {message: "Looking."}}]
      - calls: [{name: respond, args: {message: "Found it.", awaiting_user_input: true}}]
`)
	redisSrv := testutil.StartRedis(t)
	c := nodetest.NewCommits()
	// Without wake affinity, so that the processes' turns move between the
	// nodes, which then keep stale logs.
	for _, id := range []string{"a", "b", "c"} {
		startNode(t, Config{Redis: redisSrv.Client(t), NodeID: id, Models: map[string]llm.Model{"default": model},
			OnCommit: c.Add, Concurrency: 2, AffinityWait: -1})
	}
	n := startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "d", Models: map[string]llm.Model{"default": model}, OnCommit: c.Add,
		AffinityWait: -1})
	ctx := context.Background()
	pids := make([]string, processes)
	for p := range pids {
		rec, err := n.Create(ctx, NewProcess{Recipe: "brief", Input: fmt.Sprintf("p%d message 0", p)})
		if err != nil {
			t.Fatal(err)
		}
		pids[p] = rec.ID
	}
	answered := func(pid string, turns int) func(store.Record) bool {
		return func(store.Record) bool {
			k := 0
			for _, r := range c.Records() {
				if r.ID == pid {
					k++
				}
			}
			return k >= turns
		}
	}
	for i := 1; i <= messages; i++ {
		for p, pid := range pids {
			c.Wait(t, fmt.Sprintf("p%d's answer %d", p, i-1), answered(pid, i))
			if _, err := n.Send(ctx, pid, "user:ada", fmt.Sprintf("p%d message %d", p, i), ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, pid := range pids {
		c.Wait(t, "the last answers", answered(pid, messages+1))
	}

	trimmed := 0
	for p, pid := range pids {
		rec, err := n.Get(ctx, pid)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Trimmed > 0 {
			trimmed++
		}
		seen := map[string]bool{}
		for _, e := range mustLog(t, n, pid) {
			if m := e.InboxMessage; m != nil {
				if seen[m.Content] {
					t.Errorf("p%d: %q twice in the log", p, m.Content)
				}
				seen[m.Content] = true
			}
		}
	}
	if trimmed == 0 {
		t.Fatal("no log was trimmed: the test shows nothing")
	}
	for k, req := range model.Requests() {
		var shown []int
		proc := -1
		for _, m := range req.Messages {
			if m.Role != conversation.MessageUser {
				continue
			}
			for _, b := range m.Content {
				var p, i int
				if _, err := fmt.Sscanf(b.Text, "p%d message %d", &p, &i); err == nil {
					if proc >= 0 && p != proc {
						t.Fatalf("call %d shows messages of p%d and p%d", k, proc, p)
					}
					proc = p
					shown = append(shown, i)
				}
			}
		}
		for j := 1; j < len(shown); j++ {
			if shown[j] != shown[j-1]+1 {
				t.Fatalf("call %d (p%d) shows messages %v: a gap or a repeat", k, proc, shown)
			}
		}
	}
}
