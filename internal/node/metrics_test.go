package node

import (
	"context"
	"iter"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/internal/nodetest"
	brainutil "github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	c := nodetest.NewCommits()
	model := nodetest.Script(t, `
turns:
  - rounds:
      - text: "no tool"
      - calls: [{name: respond, args: {message: "ok"}}]
`)
	n := startNode(t, Config{Redis: brainutil.Redis(t), Models: map[string]llm.Model{"default": model},
		Metrics: m, OnCommit: c.Add})
	if err := n.RegisterStateGauge(reg); err != nil {
		t.Fatal(err)
	}
	rec, err := n.Create(context.Background(), NewProcess{Recipe: "ford", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the turn", func(r store.Record) bool { return r.ID == rec.ID && r.Status.State == lifecycle.Blocked })

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

// A turn whose model calls were shown a cut conversation counts them by
// recipe (a process that outgrew limits.max_context_tokens), and so are
// calls the provider refused as too long (a bound above the window).
func TestMetricsCountFittedCalls(t *testing.T) {
	t.Parallel()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	claim := &store.Claim{Record: store.Record{ID: "p1", Recipe: "ford"}}
	m.observeTurn(claim, engines.Outcome{Next: lifecycle.AwaitUser, Rounds: 3, Fitted: 2, TooLong: 1})
	m.observeTurn(claim, engines.Outcome{Next: lifecycle.AwaitUser, Rounds: 1})
	if got := testutil.ToFloat64(m.fitted.WithLabelValues("ford")); got != 2 {
		t.Errorf("brain_context_fitted_calls_total{ford} = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.tooLong.WithLabelValues("ford")); got != 1 {
		t.Errorf("brain_context_refused_calls_total{ford} = %v, want 1", got)
	}
}

// A committed turn's model calls count by recipe, an interrupted turn's
// calls before the claim (Current) included: the node that made them never
// committed them.
func TestMetricsCountTokensByRecipe(t *testing.T) {
	t.Parallel()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	usage := func(in, out int) conversation.Event {
		return conversation.NewModelUsage(conversation.ModelUsage{InputTokens: in, OutputTokens: out})
	}
	claim := &store.Claim{Record: store.Record{ID: "p1", Recipe: "ford"}, Current: []conversation.Event{usage(1000, 100)}}
	m.observeTurn(claim, engines.Outcome{Next: lifecycle.AwaitUser, Events: []conversation.Event{usage(1000, 100), usage(300, 20), usage(200, 10)}})
	for direction, want := range map[string]float64{"input": 1500, "output": 130} {
		if got := testutil.ToFloat64(m.recipeTokens.WithLabelValues("ford", direction)); got != want {
			t.Errorf("brain_recipe_tokens_total{ford,%s} = %v, want %v", direction, got, want)
		}
	}
}

// A metered model counts the tokens and hosted requests its calls report.
func TestMeteredModelCountsUsage(t *testing.T) {
	t.Parallel()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	usage := []llm.Part{
		{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: 100, OutputTokens: 7}},
		{Kind: llm.PartUsage, Usage: &llm.Usage{OutputTokens: 3, Hosted: map[string]int{"web_search": 2}}},
	}
	model := m.meter("openai", partsModel(usage))
	for range 2 {
		if _, err := llm.Collect(model.Generate(context.Background(), &llm.Request{})); err != nil {
			t.Fatal(err)
		}
	}
	for labels, want := range map[[2]string]float64{{"openai", "input"}: 200, {"openai", "output"}: 20} {
		if got := testutil.ToFloat64(m.tokens.WithLabelValues(labels[0], labels[1])); got != want {
			t.Errorf("brain_model_tokens_total%v = %v, want %v", labels, got, want)
		}
	}
	if got := testutil.ToFloat64(m.hosted.WithLabelValues("openai", "web_search")); got != 4 {
		t.Errorf("brain_hosted_requests_total{openai,web_search} = %v, want 4", got)
	}
}

// partsModel answers every call with the same parts.
type partsModel []llm.Part

func (p partsModel) Generate(context.Context, *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		for _, part := range p {
			if !yield(part, nil) {
				return
			}
		}
	}
}

// A commit that trimmed its process's log counts the events it deleted, by
// recipe.
func TestMetricsCountTrimmedEvents(t *testing.T) {
	t.Parallel()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	claim := &store.Claim{Record: store.Record{ID: "p1", Recipe: "brief", Trimmed: 100}}
	m.observeTrim(claim, store.Record{ID: "p1", Trimmed: 130})
	m.observeTrim(claim, store.Record{ID: "p1", Trimmed: 100})
	if got := testutil.ToFloat64(m.trimmed.WithLabelValues("brief")); got != 30 {
		t.Errorf("brain_log_trimmed_events_total{brief} = %v, want 30", got)
	}
}
