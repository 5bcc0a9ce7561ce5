package node

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/provider"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// sayHi is a script whose every turn answers "Hi." and waits for the user.
const sayHi = "turns:\n  - rounds:\n      - calls: [{name: respond, args: {message: \"Hi.\", awaiting_user_input: true}}]\n"

// A turn's model_usage names the candidate of a fallback chain that
// answered, not the first one asked.
func TestUsageNamesTheModelThatAnswered(t *testing.T) {
	t.Parallel()
	lib, err := recipes.LoadDir("testdata/recipes")
	if err != nil {
		t.Fatal(err)
	}
	c := nodetest.NewCommits()
	models := map[string]llm.Model{
		"default":  nodetest.Script(t, delegation),
		"down":     nodetest.FailingModel{Err: &provider.Error{Provider: "anthropic", Kind: provider.ErrUnavailable, StatusCode: 529}},
		"scripted": llmtest.WithUsage{Model: nodetest.Script(t, sayHi), In: 120, Out: 8},
	}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: models, Recipes: lib, OnCommit: c.Add})
	p, err := n.Create(context.Background(), NewProcess{Recipe: "backed-up", Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the answer", func(r store.Record) bool { return r.ID == p.ID && r.Status.State == lifecycle.Blocked })
	evs, err := n.Store().Log(context.Background(), p.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []conversation.ModelUsage
	for _, e := range evs {
		if e.ModelUsage != nil {
			got = append(got, *e.ModelUsage)
		}
	}
	want := []conversation.ModelUsage{{Provider: "scripted", Model: "backup-model", InputTokens: 120, OutputTokens: 8}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model_usage events (-want +got):\n%s", diff)
	}
}

// spendTwoAnswers starts a process of recipe on n, whose model reports 550
// input and 50 output tokens a call, waits for its first two answers, and
// sends it a third message: a 1,000-token budget is spent by then.
func spendTwoAnswers(t *testing.T, n *Node, c *nodetest.Commits, recipe string) store.Record {
	t.Helper()
	ctx := context.Background()
	p, err := n.Create(ctx, NewProcess{Recipe: recipe, Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the first answer", func(r store.Record) bool { return r.ID == p.ID && r.Tokens.Input == 550 })
	if _, err := n.Send(ctx, p.ID, "user:ada", "again", ""); err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the second answer", func(r store.Record) bool { return r.ID == p.ID && r.Tokens.Input == 1100 })
	if _, err := n.Send(ctx, p.ID, "user:ada", "and again", ""); err != nil {
		t.Fatal(err)
	}
	return p
}

// A process's model calls stop at its recipe's limits.max_tokens, counted
// across turns by the record: the turn that finds them spent fails without
// calling the model, with a notice.
func TestTokenBudgetAcrossTurns(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCommits()
	model := llmtest.WithUsage{Model: nodetest.Script(t, sayHi), In: 550, Out: 50}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.Add})
	ctx := context.Background()
	p := spendTwoAnswers(t, n, c, "frugal") // limits.max_tokens: 1000
	rec := c.Wait(t, "the spent budget", func(r store.Record) bool { return r.ID == p.ID && r.Status.State == lifecycle.Failed })
	if rec.Tokens.Input != 1100 || rec.Tokens.Output != 100 {
		t.Errorf("tokens %+v, want the two calls' alone", rec.Tokens)
	}
	evs, err := n.Store().Log(ctx, p.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-2].SystemNotice; last == nil || last.Code != rounds.NoticeTokenBudget {
		t.Errorf("the log ends %s, %s; want a token_budget notice, then the failure", evs[len(evs)-2].Type, evs[len(evs)-1].Type)
	}
}

// A process whose calls used its recipe's limits.max_tokens_per_day makes
// no more that day: the turn that finds them used ends READY with a notice,
// without a model call, and arms a timer for the next 00:00 UTC, whose
// message wakes the process; that day's calls count afresh.
func TestDayTokenBudgetAcrossDays(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC))
	c := nodetest.NewCommits()
	m := NewMetrics(prometheus.NewPedanticRegistry())
	model := llmtest.WithUsage{Model: nodetest.Script(t, sayHi), In: 550, Out: 50}
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, OnCommit: c.Add, Clock: clock.Now, Metrics: m})
	ctx := context.Background()
	p := spendTwoAnswers(t, n, c, "daily") // limits.max_tokens_per_day: 1000
	rec := c.Wait(t, "the day's spent budget", func(r store.Record) bool { return r.ID == p.ID && r.Status.State == lifecycle.Ready })
	if rec.Tokens.Input != 1100 || rec.Tokens.On(clock.Now()) != 1200 {
		t.Errorf("tokens %+v, want the two calls' alone, on this day", rec.Tokens)
	}
	evs, err := n.Store().Log(ctx, p.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if notice := evs[len(evs)-2].SystemNotice; notice == nil || notice.Code != rounds.NoticeDayTokenBudget {
		t.Errorf("the log ends %s, %s; want a day_token_budget notice, then the change to READY", evs[len(evs)-2].Type, evs[len(evs)-1].Type)
	}
	if got := promtest.ToFloat64(m.daySpent.WithLabelValues("daily")); got != 1 {
		t.Errorf("brain_day_budget_turns_total{recipe=daily} = %v, want 1", got)
	}
	midnight := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	timers, err := n.Timers(ctx, p.ID)
	if err != nil || len(timers) != 1 || !timers[0].Due.Equal(midnight) {
		t.Fatalf("timers %+v, %v; want one due at %s", timers, err, midnight)
	}
	clock.Add(time.Hour) // the node's timer loop fires it
	rec = c.Wait(t, "the next day's answer", func(r store.Record) bool { return r.ID == p.ID && r.Tokens.Input == 1650 })
	if got := rec.Tokens.On(clock.Now()); got != 600 || rec.Status.State != lifecycle.Blocked {
		t.Errorf("the next day: %d tokens that day, %s; want 600 and BLOCKED", got, rec.Status)
	}
	in, err := n.Store().Log(ctx, p.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	woken := slices.ContainsFunc(in, func(e conversation.Event) bool {
		return e.InboxMessage != nil && e.InboxMessage.Kind == conversation.KindSchedule && strings.Contains(e.InboxMessage.Content, "token budget")
	})
	if !woken {
		t.Error("no schedule message about the day's budget in the log")
	}
}

// A model's declared context window (llm.Windowed, as brain serve's
// providers declare max_context_tokens) bounds a recipe that sets none;
// with fallbacks, the smallest window does.
func TestModelWindow(t *testing.T) {
	t.Parallel()
	plain := nodetest.Script(t, "turns:\n  - rounds:\n      - text: \"hi\"\n")
	n, err := New(Config{Redis: testutil.Redis(t), Recipes: testRecipes(t), Models: map[string]llm.Model{
		"default": plain,
		"big":     llm.WithContextTokens(plain, 8000),
		"small":   llm.WithContextTokens(plain, 4000),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		m    recipes.Model
		want int
	}{
		{"none declared", recipes.Model{Provider: "default"}, 0},
		{"declared", recipes.Model{Provider: "big"}, 8000},
		{"the smallest of the fallbacks", recipes.Model{Provider: "big", Fallbacks: []recipes.Fallback{{Provider: "default"}, {Provider: "small"}}}, 4000},
	} {
		_, window, err := n.model(&recipes.Recipe{Name: "r", Model: tt.m})
		if err != nil || window != tt.want {
			t.Errorf("%s: window %d, %v; want %d", tt.name, window, err, tt.want)
		}
	}
}

// A turn's model calls are cut to the window its model declares, unless
// the recipe sets its own bound.
func TestModelWindowBoundsTheTurn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		recipe string
		cut    bool
	}{{"ford", true}, {"roomy", false}} {
		t.Run(tt.recipe, func(t *testing.T) {
			t.Parallel()
			model := nodetest.Script(t, `
turns:
  - rounds:
      - calls: [{name: respond, args: {message: "Read it.", awaiting_user_input: true}}]
  - rounds:
      - calls: [{name: respond, args: {message: "Done.", awaiting_user_input: true}}]
`)
			c := nodetest.NewCommits()
			n := startNode(t, Config{Redis: testutil.Redis(t), OnCommit: c.Add,
				Models: map[string]llm.Model{"default": llm.WithContextTokens(model, 1000)}})
			p, err := n.Create(context.Background(), NewProcess{Recipe: tt.recipe, Input: strings.Repeat("a long text ", 400)})
			if err != nil {
				t.Fatal(err)
			}
			c.Wait(t, "the first answer", func(r store.Record) bool { return r.ID == p.ID && r.Status.State == lifecycle.Blocked })
			if _, err := n.Send(context.Background(), p.ID, "user:alice", "and now?", ""); err != nil {
				t.Fatal(err)
			}
			c.Wait(t, "the second answer", func(r store.Record) bool {
				return r.ID == p.ID && r.Status.State == lifecycle.Blocked && r.Version > 3
			})
			reqs := model.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model calls, want 2", len(reqs))
			}
			first := reqs[1].Messages[0].Text()
			if cut := strings.HasPrefix(first, conversation.OmittedNote); cut != tt.cut {
				t.Errorf("the second call begins with %.80q: cut %v, want %v (the model's window is 1000 tokens)", first, cut, tt.cut)
			}
		})
	}
}
