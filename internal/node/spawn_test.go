package node

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// A parent spawns a worker, goes READY; the worker finishes; its result
// wakes the parent by itself, which answers and goes BLOCKED.
func TestWorkerResultWakesTheParent(t *testing.T) {
	t.Parallel()
	onEveryDeployment(t, testWorkerResultWakesTheParent)
}

func testWorkerResultWakesTheParent(t *testing.T, d deployment) {
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: d.client(t), Models: map[string]llm.Model{"default": nodetest.Script(t, delegation)},
		Recipes: recipes.Builtin(), OnCommit: c.Add, LeaseTTL: 2 * time.Second})
	ctx := context.Background()
	parent, err := n.Create(ctx, NewProcess{Recipe: "arthur", Input: "count the rows", Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the parent to go READY", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Ready })
	child := c.Wait(t, "the worker to finish", func(r store.Record) bool { return r.Parent == parent.ID && r.Status.State == lifecycle.Done })
	c.Wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })

	evs, err := n.Store().Log(ctx, parent.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got *conversation.ProcessEvent
	for _, e := range evs {
		if m := e.InboxMessage; m != nil && m.Kind == conversation.KindProcessEvent {
			got = new(conversation.ProcessEvent)
			if err := json.Unmarshal([]byte(m.Content), got); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := conversation.ProcessEvent{Child: child.ID, Recipe: "marvin-worker", Status: "done", Result: "three rows"}
	if got == nil || !cmp.Equal(*got, want) {
		t.Fatalf("parent's process_event = %+v, want %+v", got, want)
	}
	if child.Depth != 1 || child.Owner != "ada" {
		t.Errorf("worker depth %d, owner %q; want 1, ada (its parent's)", child.Depth, child.Owner)
	}
	owned, _, err := n.Store().ListOwned(ctx, "ada", "", "", 10)
	if err != nil || len(owned) != 2 {
		t.Errorf("ada's processes: %d, %v; want the parent and its worker", len(owned), err)
	}
}

func TestFailingWorkerReportsFailed(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCommits()
	model := nodetest.Script(t, `
turns:
  - match: "[process_event"
    rounds:
      - calls: [{name: respond, args: {message: "It failed."}}]
  - match: "TASK:"
    rounds:
      - calls: [{name: finish_task, args: {result: "source unreachable", status: failed}}]
  - rounds:
      - calls: [{name: spawn_worker, args: {recipe: failing-worker, task: "TASK: fetch"}}]
      - calls: [{name: respond, args: {message: "Started.", awaiting_user_input: false}}]
`)
	lib, err := recipes.LoadDir("testdata/recipes")
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Recipes: lib, OnCommit: c.Add})
	parent, err := n.Create(context.Background(), NewProcess{Recipe: "arthur", Input: "fetch it"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })
	reportedFailure(t, n, parent.ID, "source unreachable")
}

// A worker whose provider refuses the key, and whose fallback is down,
// fails; its parent is told, with the reason, and wakes.
func TestWorkerWithARefusedKeyFails(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCommits()
	parentModel := nodetest.Script(t, `
turns:
  - match: "[process_event"
    rounds:
      - calls: [{name: respond, args: {message: "It failed."}}]
  - rounds:
      - calls: [{name: spawn_worker, args: {recipe: keyless-worker, task: "TASK: fetch"}}]
      - calls: [{name: respond, args: {message: "Started.", awaiting_user_input: false}}]
`)
	lib, err := recipes.LoadDir("testdata/recipes")
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Value
	models := map[string]llm.Model{
		"default": parentModel,
		"keyless": nodetest.FailingModel{Err: &provider.Error{Provider: "openai", Kind: provider.ErrAuth, StatusCode: 401, Message: "Incorrect API key"}},
		"down":    nodetest.FailingModel{Err: &provider.Error{Provider: "anthropic", Kind: provider.ErrUnavailable, StatusCode: 529}, Asked: &asked},
	}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: models, Recipes: lib, OnCommit: c.Add})
	parent, err := n.Create(context.Background(), NewProcess{Recipe: "arthur", Input: "fetch it"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the worker to fail", func(r store.Record) bool { return r.Parent == parent.ID && r.Status.State == lifecycle.Failed })
	c.Wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })
	if got, _ := asked.Load().(string); got != "backup-model" {
		t.Errorf("the fallback was asked for %q, want backup-model", got)
	}
	reportedFailure(t, n, parent.ID, "refused the credentials")
}

// The sources a worker's result cites reach its parent, in the report and
// with the answer the parent then gives its user.
func TestWorkerSourcesReachTheParent(t *testing.T) {
	t.Parallel()
	src := conversation.Source{URL: "https://rows.test/table", Title: "The table"}
	model := nodetest.Citing{Model: nodetest.Script(t, delegation), Mention: "TASK:", Src: src}
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model},
		Recipes: recipes.Builtin(), OnCommit: c.Add})
	ctx := context.Background()
	parent, err := n.Create(ctx, NewProcess{Recipe: "arthur", Input: "count the rows", Owner: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })
	evs, err := n.Store().Log(ctx, parent.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var report conversation.ProcessEvent
	var answer *conversation.ToolCallResponse
	for _, e := range evs {
		if m := e.InboxMessage; m != nil {
			if r, ok := m.ProcessEvent(); ok {
				report = r
			}
		}
		if r := e.ToolCallResponse; r != nil && r.Name == "respond" {
			answer = r
		}
	}
	if !slices.Equal(report.Sources, []conversation.Source{src}) {
		t.Errorf("the worker's report cites %+v, want %+v", report.Sources, src)
	}
	if answer == nil || len(answer.Citations) != 1 || answer.Citations[0].Source != src {
		t.Errorf("the parent's last answer is %+v, want one citing %+v", answer, src)
	}
}

// A spawn_worker call whose node lost Redis after the worker was made but
// before the call's result was saved is run again when the turn is
// recovered, under the same call key: it finds the worker the first run
// made, so the parent has one worker and is told its id, not that the
// call may or may not have run. So does a spawn whose create's answer was
// lost, which Spawn tries again.
func TestRecoveredSpawnFindsItsWorker(t *testing.T) {
	t.Parallel()
	for name, drop := range map[string]*nodetest.DropScript{
		// The parent's second checkpoint holds the spawn's result (the
		// first, its request).
		"the result's checkpoint dropped": {Suffix: "_checkpoint", Skip: 1},
		// The worker's create is made but its answer is lost: Spawn tries
		// it again.
		"the create's answer lost": {Suffix: "_create", With: "marvin-worker", Sent: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			drop.Dropped = make(chan struct{})
			spawnOnce(t, drop)
		})
	}
}

// spawnOnce runs a delegation through a Redis client with drop and checks
// that the parent started one worker and was told its id.
func spawnOnce(t *testing.T, drop *nodetest.DropScript) {
	rdb := testutil.Redis(t)
	rdb.AddHook(drop)
	n, parent := delegating(t, Config{Redis: rdb, LeaseTTL: 500 * time.Millisecond},
		func(r store.Record) bool { return r.Status.State == lifecycle.Blocked })
	ctx := context.Background()
	select {
	case <-drop.Dropped:
	default:
		t.Fatal("no checkpoint was dropped")
	}
	workers, _, err := n.ListWorkers(ctx, parent.ID, "", "", 10)
	if err != nil || len(workers) != 1 {
		t.Fatalf("the parent's workers: %d, %v; want one", len(workers), err)
	}
	results := toolResults(t, n, parent.ID, tools.SpawnWorker)
	if len(results) != 1 || !strings.HasPrefix(results[0], "Started worker "+workers[0].ID+" ") {
		t.Errorf("spawn_worker results in the parent's log: %q; want one, starting worker %s", results, workers[0].ID)
	}
}

// A spawn_worker beyond the owner's process limit is refused, and the
// model is told why and what to do instead.
func TestSpawnBeyondTheOwnerLimit(t *testing.T) {
	t.Parallel()
	n, parent := delegating(t, Config{Redis: testutil.Redis(t), OwnerLimit: 1}, func(store.Record) bool { return true })
	ctx := context.Background()
	results := toolResults(t, n, parent.ID, tools.SpawnWorker)
	if len(results) != 1 || !strings.Contains(results[0], "spawn_worker refused: the user this process works for has the most processes the server allows (1;") {
		t.Errorf("spawn_worker errors: %q; want the refusal, saying the limit", results)
	}
	if workers, _, err := n.ListWorkers(ctx, parent.ID, "", "", 10); err != nil || len(workers) != 0 {
		t.Errorf("workers: %d, %v; want none", len(workers), err)
	}
}

// A spawn whose every create loses its answer (Redis made it each time)
// gives up after its tries, telling the model the worker may or may not
// have started; the tries made one worker, under one key.
func TestSpawnThatCannotBeConfirmed(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	drop := &nodetest.DropScript{Suffix: "_create", With: "marvin-worker", Sent: true, All: true, Dropped: make(chan struct{})}
	rdb.AddHook(drop)
	n, parent := delegating(t, Config{Redis: rdb}, func(store.Record) bool { return true })
	ctx := context.Background()
	results := toolResults(t, n, parent.ID, tools.SpawnWorker)
	if len(results) != 1 || !strings.Contains(results[0], "the worker may or may not have been started") {
		t.Errorf("spawn_worker results: %q; want one saying the worker may or may not have started", results)
	}
	if workers, _, err := n.ListWorkers(ctx, parent.ID, "", "", 10); err != nil || len(workers) != 1 {
		t.Errorf("workers: %d, %v; want the one the tries made", len(workers), err)
	}
}

// reportedFailure checks that the last process_event in the log of parent
// is a worker's report of a failed task whose result says why.
func reportedFailure(t *testing.T, n *Node, parent, why string) {
	t.Helper()
	evs, err := n.Store().Log(context.Background(), parent, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if m := e.InboxMessage; m != nil && m.Kind == conversation.KindProcessEvent {
			found = strings.Contains(m.Content, `"status":"failed"`) && strings.Contains(m.Content, why)
		}
	}
	if !found {
		t.Fatalf("the parent's log has no process_event with status failed saying %q", why)
	}
}
