package brain_test

import (
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/engines/vogon"
	"github.com/engine-brain/brain/engines/worker"
	"github.com/engine-brain/brain/engines/zaphod"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// echo is an engine kind of this test's own, added as package engines says:
// it answers the turn's messages with their text, without a model, and
// waits for the user.
type echo struct{}

func (echo) Run(_ context.Context, t *engines.Turn, _ engines.Checkpointer) (engines.Outcome, error) {
	var said []string
	for _, e := range t.Current {
		if m := e.InboxMessage; m != nil {
			said = append(said, m.Content)
		}
	}
	answer := conversation.NewChatMessage("echo: " + strings.Join(said, " / "))
	answer.Turn, answer.By, answer.At = t.ID, "engine:echo", time.Now()
	evs := []conversation.Event{answer}
	return engines.Outcome{Events: evs, Pending: evs, Next: lifecycle.AwaitUser}, nil
}

// loadRecipes writes recipe files (name -> YAML) to a directory and loads it.
func loadRecipes(t *testing.T, files map[string]string) *recipes.Library {
	t.Helper()
	dir := t.TempDir()
	for name, yaml := range files {
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// startNode starts a node of cfg on a real Redis and sends every commit's
// record to the channel it returns.
func startNode(t *testing.T, cfg brain.Config) (*brain.Node, <-chan store.Record) {
	t.Helper()
	commits := make(chan store.Record, 16)
	cfg.Redis = testutil.Redis(t)
	cfg.OnCommit = func(rec store.Record, _ []conversation.Event) { commits <- rec }
	n, err := brain.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	return n, commits
}

// waitCommit waits for the commit of a turn of pid.
func waitCommit(t *testing.T, commits <-chan store.Record, pid string) store.Record {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case rec := <-commits:
			if rec.ID == pid {
				return rec
			}
		case <-deadline:
			t.Fatalf("no turn of %s committed", pid)
		}
	}
}

// TestCustomEngine adds an engine kind through the public API and runs a
// turn of it on a real node: the recipe's engine kind picks it.
func TestCustomEngine(t *testing.T) {
	t.Parallel()
	reg, err := engines.NewRegistry(chat.Kind(nil), worker.Kind(nil), vogon.Kind(nil), zaphod.Kind(nil), engines.Kind{Name: "echo", Engine: echo{}})
	if err != nil {
		t.Fatal(err)
	}
	lib := loadRecipes(t, map[string]string{"parrot": "name: parrot\nengine: echo\nmodel: {provider: default}\nturn_end: natural\n"})
	n, commits := startNode(t, brain.Config{
		Recipes: lib, Registry: reg, Engines: []string{"echo"},
		Models: map[string]llm.Model{"default": scripted.New(&scripted.Script{})}, // never called
	})
	rec, err := n.Create(context.Background(), brain.NewProcess{Recipe: "parrot", Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if rec = waitCommit(t, commits, rec.ID); rec.Status.State != lifecycle.Blocked {
		t.Errorf("after the echo turn the process is %s; want BLOCKED", rec.Status.State)
	}
	log, err := n.Log(context.Background(), rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var answers []string
	for _, e := range log {
		if c := e.ChatResponse; c != nil {
			answers = append(answers, c.Text+" by "+e.By)
		}
	}
	if want := "echo: hello by engine:echo"; len(answers) != 1 || answers[0] != want {
		t.Errorf("answers %q; want [%q]", answers, want)
	}
}

// TestUnknownEngineKind: a node refuses recipes of a kind it has not
// registered, saying which kinds it has.
func TestUnknownEngineKind(t *testing.T) {
	t.Parallel()
	lib := loadRecipes(t, map[string]string{"parrot": "name: parrot\nengine: echo\nmodel: {provider: default}\nturn_end: natural\n"})
	_, err := brain.New(brain.Config{Redis: testutil.Redis(t), Recipes: lib, Models: map[string]llm.Model{"default": scripted.New(&scripted.Script{})}})
	if err == nil || !strings.Contains(err.Error(), `recipe parrot names engine "echo"; this node runs chat, vogon, worker`) {
		t.Errorf("New with a recipe of an unregistered kind: %v; want an error naming the kinds", err)
	}
}

// TestSpawnOnlyTaskRecipes: spawn_worker starts processes of a task kind
// only; a chat recipe gets an error result the model can act on, and no
// process.
func TestSpawnOnlyTaskRecipes(t *testing.T) {
	t.Parallel()
	lib := loadRecipes(t, map[string]string{"boss": "name: boss\nmodel: {provider: default}\ntools: [respond, spawn_worker]\n"})
	s, err := scripted.Parse([]byte(`
turns:
  - rounds:
      - calls: [{name: spawn_worker, args: {recipe: boss, task: "count the rows"}}]
      - calls: [{name: respond, args: {message: "I will do it myself."}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	n, commits := startNode(t, brain.Config{Recipes: lib, Models: map[string]llm.Model{"default": scripted.New(s)}})
	rec, err := n.Create(context.Background(), brain.NewProcess{Recipe: "boss", Input: "count the rows"})
	if err != nil {
		t.Fatal(err)
	}
	waitCommit(t, commits, rec.ID)
	log, err := n.Log(context.Background(), rec.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var result *conversation.ToolCallResponse
	for _, e := range log {
		if r := e.ToolCallResponse; r != nil && r.Name == "spawn_worker" {
			result = r
		}
	}
	want := "spawn_worker refused: recipe boss runs on the chat engine"
	if result == nil || !result.IsError || !strings.Contains(conversation.TextOf(result.Content), want) ||
		!strings.Contains(conversation.TextOf(result.Content), "marvin-worker") {
		t.Fatalf("spawn_worker's result %+v; want an error saying %q and naming marvin-worker", result, want)
	}
	workers, _, err := n.ListWorkers(context.Background(), rec.ID, "", "", 10)
	if err != nil || len(workers) != 0 {
		t.Errorf("workers of the process: %v, %v; want none", workers, err)
	}
}

// down is a model whose every call fails.
type down struct{}

func (down) Generate(context.Context, *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) { yield(llm.Part{}, errors.New("the model is down")) }
}

// TestWorkerWithoutAParent: a process of a worker recipe started by hand
// (brain new marvin-worker) runs on the worker engine, whether it has a
// parent or not: a turn that ends without a result leaves it READY, not
// BLOCKED waiting for a person who is not there.
func TestWorkerWithoutAParent(t *testing.T) {
	t.Parallel()
	n, commits := startNode(t, brain.Config{Models: map[string]llm.Model{"default": down{}}})
	rec, err := n.Create(context.Background(), brain.NewProcess{Recipe: "marvin-worker", Input: "count the rows"})
	if err != nil {
		t.Fatal(err)
	}
	if rec = waitCommit(t, commits, rec.ID); rec.Status.State != lifecycle.Ready {
		t.Errorf("after a failed model call the worker is %s; want READY", rec.Status.State)
	}
}
