package zaphod

import (
	"context"
	"flag"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// arrivals is the order in which each scenario's heads answer: a head's
// model call waits until the head before it in this order has been
// checkpointed, so that heads answering out of the recipe's order give one
// transcript, always the same.
var arrivals = map[string][]string{
	"out_of_order": {"pragmatist", "skeptic", "optimist"},
	"head_failing": {"skeptic", "optimist", "pragmatist"},
	"all_failing":  {"optimist", "skeptic", "pragmatist"},
}

// TestGoldenTranscripts plays every scenario under testdata/, its heads
// answering in the order arrivals gives, and compares its transcript with
// the golden file.
func TestGoldenTranscripts(t *testing.T) {
	t.Parallel()
	for name, order := range arrivals {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", name+".yaml")
			s := enginetest.Load(t, path)
			s.Recipe.Engine = recipes.EngineZaphod
			got := enginetest.Render(t, play(t, s, order, scripted.New(&s.Script)))
			golden := strings.TrimSuffix(path, ".yaml") + ".golden.yaml"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run `go test ./engines/zaphod -update` to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs (-want +got); run `go test ./engines/zaphod -update` if the change is intended:\n%s", golden, diff)
			}
		})
	}
}

// play plays scenario s on model with its heads answering in order.
func play(t *testing.T, s *enginetest.Scenario, order []string, model llm.Model) *engines.Session {
	t.Helper()
	g := newGate(&s.Recipe, order, model)
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
// each in order must have been checkpointed (Engine.answered).
type gate struct {
	inner  llm.Model
	heads  []recipes.Head
	order  []string
	opened map[string]chan struct{}
}

func newGate(r *recipes.Recipe, order []string, inner llm.Model) *gate {
	g := &gate{inner: inner, heads: r.Heads, order: order, opened: make(map[string]chan struct{})}
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
		if strings.HasPrefix(req.System, h.SystemPrompt+"\n\n") { // the head's prompt, then its contract text
			select {
			case <-g.opened[h.Name]:
			case <-ctx.Done():
			}
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
