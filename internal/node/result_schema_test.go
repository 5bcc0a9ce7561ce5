package node

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// A worker with a result_schema whose first result does not match is
// corrected; its parent's process_event carries the result parsed, as
// data, and the parent's model reads it there (its script answers only a
// report that shows the data).
func TestWorkerResultSchemaReachesTheParent(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCommits()
	model := nodetest.Script(t, `
turns:
  - match: '"data":{"count":3}'
    rounds:
      - calls: [{name: respond, args: {message: "Three."}}]
  - match: "TASK:"
    rounds:
      - calls: [{name: finish_task, args: {result: "three"}}]
      - calls: [{name: finish_task, args: {result: '{"count": 3}'}}]
  - rounds:
      - calls: [{name: spawn_worker, args: {recipe: structured-worker, task: "TASK: count"}}]
      - calls: [{name: respond, args: {message: "Started.", awaiting_user_input: false}}]
`)
	lib, err := recipes.LoadDir("testdata/recipes")
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Recipes: lib, OnCommit: c.Add})
	ctx := context.Background()
	parent, err := n.Create(ctx, NewProcess{Recipe: "arthur", Input: "count them"})
	if err != nil {
		t.Fatal(err)
	}
	child := c.Wait(t, "the worker to finish", func(r store.Record) bool { return r.Parent == parent.ID && r.Status.State == lifecycle.Done })
	c.Wait(t, "the parent to answer", func(r store.Record) bool { return r.ID == parent.ID && r.Status.State == lifecycle.Blocked })

	evs, err := n.Store().Log(ctx, parent.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got conversation.ProcessEvent
	var answered bool
	for _, e := range evs {
		if m := e.InboxMessage; m != nil {
			if r, ok := m.ProcessEvent(); ok {
				got = r
			}
		}
		if r := e.ToolCallResponse; r != nil && r.Name == "respond" && strings.HasPrefix(conversation.TextOf(r.Content), "Three.") {
			answered = true
		}
	}
	want := conversation.ProcessEvent{Child: child.ID, Recipe: "structured-worker", Status: "done", Result: `{"count": 3}`, Data: []byte(`{"count":3}`)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the parent's process_event (-want +got):\n%s", diff)
	}
	if !answered {
		t.Error("the parent did not answer from the report's data")
	}
	wlog, err := n.Store().Log(ctx, child.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	corrections := 0
	for _, e := range wlog {
		if v := e.ValidationCorrection; v != nil && v.Validator == "result_schema" {
			corrections++
		}
	}
	if corrections != 1 {
		t.Errorf("the worker's log has %d result_schema corrections, want 1", corrections)
	}
}
