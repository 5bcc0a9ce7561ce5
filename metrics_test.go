package brain

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	brainutil "github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	c := newCommits()
	model := script(t, `
turns:
  - rounds:
      - text: "no tool"
      - calls: [{name: respond, args: {message: "ok"}}]
`)
	n := startNode(t, Config{Redis: brainutil.Redis(t), Models: map[string]llm.Model{"default": model},
		Metrics: m, OnCommit: c.add})
	if err := n.RegisterStateGauge(reg); err != nil {
		t.Fatal(err)
	}
	rec, err := n.Create(context.Background(), NewProcess{Recipe: "ford", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(t, "the turn", func(r store.Record) bool { return r.ID == rec.ID && r.Status.State == lifecycle.Blocked })

	if got := testutil.ToFloat64(m.turns.WithLabelValues("ford", "await_user")); got != 1 {
		t.Errorf("brain_turns_total{ford,await_user} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.corrections.WithLabelValues("no_tool_call")); got != 1 {
		t.Errorf("brain_validator_corrections_total{no_tool_call} = %v, want 1", got)
	}
	for name, want := range map[string]int{
		"brain_turn_rounds":           1,
		"brain_wake_latency_seconds":  1,
		"brain_model_latency_seconds": 1,
		"brain_processes":             len(lifecycle.States()),
	} {
		if got, err := testutil.GatherAndCount(reg, name); err != nil || got != want {
			t.Errorf("%s: %d series (%v), want %d", name, got, err, want)
		}
	}
}
