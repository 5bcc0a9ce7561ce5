package node

import (
	"cmp"
	"fmt"

	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

// library is a set of recipes with their tool registries; SetRecipes
// replaces it whole, so that a turn sees one consistent set.
type library struct {
	recipes *recipes.Library
	tools   *toolset.Cache
}

func newLibrary(r *recipes.Library, b toolset.Builder) *library {
	return &library{recipes: r, tools: toolset.NewCache(b)}
}

// recipe returns the recipe called name.
func (n *Node) recipe(name string) (*recipes.Recipe, error) { return n.Recipes().Get(name) }

// Recipes returns the recipes processes are created from.
func (n *Node) Recipes() *recipes.Library { return n.library.Load().recipes }

// SetRecipes replaces the recipes (a reload). Turns already running keep
// the recipe they started with; the next turn of every process uses the
// new set.
func (n *Node) SetRecipes(lib *recipes.Library) {
	n.library.Store(newLibrary(lib, n.toolBuilder))
}

// turnSetup is what a turn of a process runs with: its recipe, model and
// tools, and the most tokens of the conversation a model call is shown.
type turnSetup struct {
	recipe        *recipes.Recipe
	kind          engines.Kind
	model         llm.Model
	tools         *tools.Registry
	contextTokens int
}

// prepare resolves what a turn of the process rec runs with.
func (n *Node) prepare(rec store.Record) (turnSetup, error) {
	lib := n.library.Load()
	r, err := lib.recipes.Get(rec.Recipe)
	if err != nil {
		return turnSetup{}, err
	}
	kind, err := n.cfg.Registry.Of(r)
	if err != nil {
		return turnSetup{}, err
	}
	model, window, err := n.model(r)
	if err != nil {
		return turnSetup{}, err
	}
	reg, err := lib.tools.Tools(r)
	if err != nil {
		return turnSetup{}, err
	}
	// The recipe's own bound wins over its models' windows, which win over
	// the default bound.
	bound := cmp.Or(r.Limits.MaxContextTokens, window, r.Limits.ContextTokens())
	return turnSetup{recipe: r, kind: kind, model: model, tools: reg, contextTokens: bound}, nil
}

// model resolves a recipe's model, by Config.ResolveModel when set, else
// by Config.Models; each candidate observed (spans, metrics) under its
// provider name. With model.fallbacks, the candidates are tried in order
// (llm.Fallback). window is the smallest context window the candidates
// declare (llm.Windowed), 0 when none does.
func (n *Node) model(r *recipes.Recipe) (model llm.Model, window int, err error) {
	return n.modelOf(r, r.Model)
}

// sections resolves the model sections of recipe r other than its model
// (a zaphod head's, completed by the recipe's), as model resolves r's:
// engines.Turn.Models.
func (n *Node) sections(r *recipes.Recipe) func(recipes.Model) (llm.Model, error) {
	return func(m recipes.Model) (llm.Model, error) {
		model, _, err := n.modelOf(r, m)
		return model, err
	}
}

// modelOf resolves model section spec of recipe r (see model).
func (n *Node) modelOf(r *recipes.Recipe, spec recipes.Model) (model llm.Model, window int, err error) {
	specs := spec.Candidates()
	chain := make([]llm.Candidate, len(specs))
	for i, m := range specs {
		c, w, err := n.candidate(r, m)
		if err != nil {
			return nil, 0, err
		}
		if w > 0 && (window == 0 || w < window) {
			window = w
		}
		chain[i] = llm.Candidate{Model: c, Name: m.Name}
	}
	if len(chain) == 1 {
		return chain[0].Model, window, nil
	}
	return llm.Fallback(chain...), window, nil
}

// candidate resolves one model section of recipe r, observed, its usage
// saying who answered (the model may have said so itself, more precisely:
// brain serve's providers name the provider "default" stands for).
func (n *Node) candidate(r *recipes.Recipe, m recipes.Model) (llm.Model, int, error) {
	p := m.Provider
	if p == "" {
		p = recipes.DefaultProvider
	}
	model, ok := n.cfg.Models[p]
	if n.cfg.ResolveModel != nil {
		var err error
		if model, err = n.cfg.ResolveModel(m); err != nil {
			return nil, 0, fmt.Errorf("recipe %s: %w", r.Name, err)
		}
	} else if !ok {
		return nil, 0, fmt.Errorf("recipe %s: no model for provider %q; configure one", r.Name, p)
	}
	window := 0
	if w, ok := model.(llm.Windowed); ok {
		window = w.ContextTokens()
	}
	return n.models.wrap(p, llm.Answering(p, "", model)), window, nil
}
