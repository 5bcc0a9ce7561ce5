package zaphod

import (
	"context"
	"errors"
	"flag"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// hangs names the heads of a scenario whose model calls block until the
// head's context ends (its timeout).
var hangs = map[string][]string{
	"head_timeout": {"skeptic"},
}

// TestGoldenTranscripts plays every scenario under testdata/ once for each
// order in which its heads can answer (each head's model call waits until
// the head before it in that order has been checkpointed), checks that the
// log holds the heads in that order, and compares the transcript with the
// golden file: the same for every order. The transcript holds the heads'
// events in the recipe's order (see golden) and the system prompt the
// synthesis was given, which lists the heads in the recipe's order.
func TestGoldenTranscripts(t *testing.T) {
	t.Parallel()
	for _, path := range enginetest.Scenarios(t, 5) {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var heads []string
			for _, h := range enginetest.Load(t, path).Recipe.Heads {
				heads = append(heads, h.Name)
			}
			orders := permutations(heads)
			if len(orders) < 2 {
				t.Fatalf("%s has %d heads: nothing to answer out of order", path, len(heads))
			}
			goldenPath := strings.TrimSuffix(path, ".yaml") + ".golden.yaml"
			var want []byte
			for i, order := range orders {
				s := enginetest.Load(t, path)
				s.Recipe.Engine = recipes.EngineZaphod
				model := scripted.New(&s.Script)
				sess := play(t, s, order, hangs[name], model)
				if got := arrived(sess.Log); !slices.Equal(got, order) {
					t.Fatalf("heads logged in the order %v, want %v: the scripted model did not hold them back", got, order)
				}
				got := golden(t, sess, &s.Recipe, model)
				if i == 0 {
					if *update {
						if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					var err error
					if want, err = os.ReadFile(goldenPath); err != nil {
						t.Fatalf("%v (run `go test ./engines/zaphod -update` to create it)", err)
					}
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("heads answering in the order %v: %s differs (-want +got); run `go test ./engines/zaphod -update` if the change is intended:\n%s",
						order, goldenPath, diff)
				}
			}
		})
	}
}

// golden is the golden transcript of sess: enginetest's, of the log with
// the heads' events in the recipe's order (the log keeps each head's events
// as it answered, in one checkpoint; which answered first is the only
// thing that differs from run to run), then the system prompt of the
// synthesis's first model call.
func golden(t *testing.T, sess *engines.Session, r *recipes.Recipe, model *scripted.Model) []byte {
	t.Helper()
	sorted := *sess
	sorted.Log = recipeOrder(sess.Log, r.Heads)
	out := enginetest.Render(t, &sorted)
	for _, req := range model.Requests() {
		if strings.HasPrefix(req.System, r.Synthesis.SystemPrompt+"\n\n") {
			b, err := yaml.Marshal(map[string]string{"synthesis_system": req.System})
			if err != nil {
				t.Fatal(err)
			}
			return append(out, b...)
		}
	}
	return out
}

// recipeOrder returns events with each run of heads' events (Event.Aside)
// sorted by the heads' order in the recipe, each head's own events kept in
// their order; every other event stays where it is.
func recipeOrder(events []conversation.Event, heads []recipes.Head) []conversation.Event {
	rank := func(e conversation.Event) int {
		name := strings.TrimPrefix(e.By, ByHead)
		return slices.IndexFunc(heads, func(h recipes.Head) bool { return h.Name == name })
	}
	out := slices.Clone(events)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j].Aside() {
			j++
		}
		slices.SortStableFunc(out[i:j], func(a, b conversation.Event) int { return rank(a) - rank(b) })
		i = max(j, i+1)
	}
	return out
}

// arrived returns the heads in the order the log first names them.
func arrived(log []conversation.Event) []string {
	var out []string
	for _, e := range log {
		if name, ok := strings.CutPrefix(e.By, ByHead); ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// permutations returns every order of names, names' own first.
func permutations(names []string) [][]string {
	if len(names) <= 1 {
		return [][]string{slices.Clone(names)}
	}
	var out [][]string
	for i, first := range names {
		rest := slices.Concat(names[:i:i], names[i+1:])
		for _, p := range permutations(rest) {
			out = append(out, append([]string{first}, p...))
		}
	}
	return out
}

// play plays scenario s on model with its heads answering in order; the
// model calls of the heads in hang block until their context ends.
func play(t *testing.T, s *enginetest.Scenario, order, hang []string, model llm.Model) *engines.Session {
	t.Helper()
	g := newGate(&s.Recipe, order, hang, model)
	clock := engines.StepClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	e := &Engine{Clock: clock, answered: g.answered}
	sess := engines.NewSession(e, engines.Turn{Recipe: &s.Recipe, Model: g, Tools: testRegistry(t, &s.Recipe)}, clock)
	for _, m := range s.Messages {
		if _, err := sess.Say(context.Background(), "user:ada", m); err != nil {
			t.Fatalf("say %q: %v", m, err)
		}
	}
	return sess
}

// gate is a model whose heads' calls wait for their turn: the head before
// each in order must have been checkpointed (Engine.answered). The calls
// of the heads in hang then wait for their context to end, and fail.
type gate struct {
	inner  llm.Model
	heads  []recipes.Head
	order  []string
	hang   []string
	opened map[string]chan struct{}
}

func newGate(r *recipes.Recipe, order, hang []string, inner llm.Model) *gate {
	g := &gate{inner: inner, heads: r.Heads, order: order, hang: hang, opened: make(map[string]chan struct{})}
	for _, name := range order {
		g.opened[name] = make(chan struct{})
	}
	close(g.opened[order[0]])
	return g
}

func (g *gate) answered(head string) {
	for i, name := range g.order {
		if name == head && i+1 < len(g.order) {
			close(g.opened[g.order[i+1]])
		}
	}
}

func (g *gate) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	for _, h := range g.heads {
		if !strings.HasPrefix(req.System, h.SystemPrompt+"\n\n") { // the head's prompt, then its contract text
			continue
		}
		if slices.Contains(g.hang, h.Name) {
			<-g.opened[h.Name] // its timeout may end ctx meanwhile: it still answers in its turn

			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second): // a guard, not a wait: the head's timeout should have ended ctx long before
				return func(yield func(llm.Part, error) bool) {
					yield(llm.Part{}, errors.New("the head's timeout never ended its call"))
				}
			}
			return func(yield func(llm.Part, error) bool) { yield(llm.Part{}, context.Cause(ctx)) }
		}
		select {
		case <-g.opened[h.Name]:
		case <-ctx.Done():
		}
	}
	return g.inner.Generate(ctx, req)
}

// testRegistry builds the tool pool a recipe names from the built-ins and
// the test tools.
func testRegistry(t testing.TB, r *recipes.Recipe) *tools.Registry {
	t.Helper()
	reg, err := toolset.Build(enginetest.Catalog(), r)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
