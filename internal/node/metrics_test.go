package node

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/internal/nodetest"
	brainutil "github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
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

// observer returns a model observer that records into m only.
func observer(t *testing.T, m *Metrics) *modelObserver {
	t.Helper()
	o, err := newModelObserver(Config{Metrics: m, TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// An observed model counts the tokens and hosted requests its calls
// report, by provider and model.
func TestObservedModelCountsUsage(t *testing.T) {
	t.Parallel()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	usage := []llm.Part{
		{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: 100, OutputTokens: 7}},
		{Kind: llm.PartUsage, Usage: &llm.Usage{OutputTokens: 3, Hosted: map[string]int{"web_search": 2}}},
	}
	model := observer(t, m).wrap("openai", partsModel(usage))
	for range 2 {
		if _, err := llm.Collect(model.Generate(context.Background(), &llm.Request{Params: llm.Params{Model: "gpt-x"}})); err != nil {
			t.Fatal(err)
		}
	}
	for direction, want := range map[string]float64{"input": 200, "output": 20} {
		if got := testutil.ToFloat64(m.tokens.WithLabelValues("openai", "gpt-x", direction)); got != want {
			t.Errorf("brain_model_tokens_total{openai,gpt-x,%s} = %v, want %v", direction, got, want)
		}
	}
	if got := testutil.ToFloat64(m.hosted.WithLabelValues("openai", "web_search")); got != 4 {
		t.Errorf("brain_hosted_requests_total{openai,web_search} = %v, want 4", got)
	}
	if got := testutil.CollectAndCount(m.modelLatency, "brain_model_latency_seconds"); got != 1 {
		t.Errorf("brain_model_latency_seconds: %d series, want 1 (openai, gpt-x)", got)
	}
}

// A failed model call counts under the kind of its error, from llm's
// sentinels; a cancelled one is the node's doing and counts under none.
func TestModelErrorsByKind(t *testing.T) {
	t.Parallel()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	o := observer(t, m)
	for _, err := range []error{
		fmt.Errorf("openai: %w", llm.ErrRateLimited),
		fmt.Errorf("openai: %w", llm.ErrAuth),
		fmt.Errorf("openai: %w (gave up after 4 attempts)", llm.ErrUnavailable),
		fmt.Errorf("openai: %w", context.DeadlineExceeded),
		fmt.Errorf("openai: %w: %w", llm.ErrBadRequest, llm.ErrContextTooLong),
		fmt.Errorf("openai: %w: %w", llm.ErrBadRequest, llm.ErrPayload),
		fmt.Errorf("openai: %w", llm.ErrBadRequest),
		errors.New("something else"),
		&llm.FallbackError{Errs: []error{llm.ErrRateLimited}},
		fmt.Errorf("openai: %w", context.Canceled),
	} {
		if _, got := llm.Collect(o.wrap("openai", nodetest.FailingModel{Err: err}).Generate(context.Background(), &llm.Request{})); got == nil {
			t.Fatalf("the call failing with %v succeeded", err)
		}
	}
	want := map[string]float64{"rate_limit": 2, "auth": 1, "server": 1, "timeout": 1, "context_length": 1, "payload": 1, "bad_request": 1, "other": 1}
	for kind, n := range want {
		if got := testutil.ToFloat64(m.modelErrors.WithLabelValues("openai", "", kind)); got != n {
			t.Errorf("brain_model_errors_total{kind=%q} = %v, want %v", kind, got, n)
		}
	}
	if got := testutil.CollectAndCount(m.modelErrors); got != len(want) {
		t.Errorf("brain_model_errors_total: %d series, want %d (none for canceled)", got, len(want))
	}
}

// An adapter's retries count, and so does the time to the first token of
// the answer that came.
func TestModelRetriesAndFirstToken(t *testing.T) {
	t.Parallel()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	model := observer(t, m).wrap("anthropic", flaky{fails: 2})
	resp, err := llm.Collect(model.Generate(context.Background(), &llm.Request{Params: llm.Params{Model: "claude"}}))
	if err != nil || resp.Text != "at last" {
		t.Fatalf("answer %q, %v; want the third attempt's", resp.Text, err)
	}
	if got := testutil.ToFloat64(m.retries.WithLabelValues("anthropic", "claude")); got != 2 {
		t.Errorf("brain_model_retries_total = %v, want 2", got)
	}
	if got := testutil.CollectAndCount(m.firstToken, "brain_model_time_to_first_token_seconds"); got != 1 {
		t.Errorf("brain_model_time_to_first_token_seconds: %d series, want 1", got)
	}
}

// flaky is a model whose calls go through an adapter's retry policy
// (provider.Retry) and fail that many times before they answer.
type flaky struct{ fails int }

func (f flaky) Generate(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		r := provider.Retry{Provider: "anthropic", MaxAttempts: f.fails + 1, Sleep: func(context.Context, time.Duration) error { return nil }}.WithDefaults()
		failed := 0
		r.Stream(ctx, zap.NewNop(), func() (yielded, stopped bool, err error) {
			if failed < f.fails {
				failed++
				return false, false, &provider.Error{Provider: "anthropic", Kind: provider.ErrUnavailable, StatusCode: 529}
			}
			return true, !yield(llm.Part{Kind: llm.PartText, Text: "at last"}, nil), nil
		}, yield)
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

// The node counts the Redis failures its own work meets, in the family it
// shares with the API, whichever registers it first.
func TestRedisUnavailableCounted(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	api := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brain_redis_unavailable_total", Help: redisUnavailableHelp}, []string{"source"})
	reg.MustRegister(api)
	m := NewMetrics(reg)
	srv := brainutil.StartRedis(t)
	log, failed := nodetest.Logged("wakes failed")
	startNode(t, Config{Redis: srv.Client(t), Models: map[string]llm.Model{"default": partsModel(nil)}, Metrics: m, Logger: log})
	srv.Shutdown(t)
	select {
	case <-failed:
	case <-time.After(10 * time.Second):
		t.Fatal("the node never failed to read wakes")
	}
	if got := testutil.ToFloat64(api.WithLabelValues("node")); got < 1 {
		t.Errorf(`brain_redis_unavailable_total{source="node"} = %v, want at least 1`, got)
	}
}
