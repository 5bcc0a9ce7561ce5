package worker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/tools"
)

// finished plays the scenario at path and returns what its task reports to
// the parent (Outcome.Finish).
func finished(t *testing.T, path string) *tools.FinishArgs {
	t.Helper()
	s := enginetest.Load(t, path)
	clock := engines.StepClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	sess := engines.NewSession(Kind(clock).Engine, engines.Turn{
		Recipe: &s.Recipe, Model: scripted.New(&s.Script), Tools: testRegistry(t, &s.Recipe),
	}, clock)
	outs, err := sess.Say(context.Background(), "user:ada", s.Messages[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Finish == nil {
		t.Fatalf("outcomes = %+v, want one that finishes the task", outs)
	}
	return outs[0].Finish
}

// TestResultSchemaData: the corrected result reaches the parent parsed, as
// Data, besides its text.
func TestResultSchemaData(t *testing.T) {
	t.Parallel()
	got := finished(t, "testdata/result_schema.yaml")
	want := &tools.FinishArgs{
		Result: `{"count": 3, "ids": ["#101", "#102", "#103"]}`,
		Status: tools.FinishDone,
		Data:   []byte(`{"count":3,"ids":["#101","#102","#103"]}`),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Finish (-want +got):\n%s", diff)
	}
}

// TestResultSchemaSpent: once the corrections are spent, the task fails and
// the parent is told why, with the worker's last result.
func TestResultSchemaSpent(t *testing.T) {
	t.Parallel()
	got := finished(t, "testdata/result_schema_spent.yaml")
	if got.Status != tools.FinishFailed || got.Data != nil {
		t.Errorf("Finish = %+v, want status failed without data", got)
	}
	for _, part := range []string{"did not match its recipe's result_schema", "validation.max_corrections: 1", "- /count: missing required property", `{"total": 3}`} {
		if !strings.Contains(got.Result, part) {
			t.Errorf("result %q lacks %q", got.Result, part)
		}
	}
}
