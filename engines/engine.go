package engines

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/engine-brain/brain/recipes"
)

// Engine runs the turns of one kind of process. Run plays one turn, or
// resumes one (t.Current holds what the turn has committed so far),
// making its progress durable through cp; it returns the turn's outcome,
// which the caller commits. It returns an error only when a checkpoint
// fails or ctx ends (the node stops, or lost the lease): the turn is then
// recovered from its last checkpoint; a failing model or tool ends the
// turn with a notice instead. An
// Engine holds no per-turn state and is safe for concurrent use.
type Engine interface {
	Run(ctx context.Context, t *Turn, cp Checkpointer) (Outcome, error)
}

// Kind is an engine kind that recipes name (the recipe's engine field).
type Kind struct {
	Name   recipes.Engine
	Engine Engine
	// Task marks the kinds whose processes carry out a task for a parent
	// process: spawn_worker starts only these, and the turn that ends one
	// (Outcome.Finish) reports its result to the parent's inbox.
	Task bool
	// TaskOf, when set, marks the recipes of a kind that carry out tasks
	// though the kind is not all of a Task kind (a vogon recipe that ends
	// with finish_task); see Tasks.
	TaskOf func(r *recipes.Recipe) bool
	// Terms returns the contract the kind's engine holds the model of
	// recipe r to (its contract text and ending tool); nil: none.
	Terms func(r *recipes.Recipe) Terms
}

// Tasks reports whether the processes of recipe r, of this kind, carry out
// tasks for a parent: spawn_worker starts only those.
func (k Kind) Tasks(r *recipes.Recipe) bool {
	return k.Task || (k.TaskOf != nil && k.TaskOf(r))
}

// Registry holds the engine kinds a node runs; the recipe's engine kind
// picks the engine of each process's turns, and nothing else does.
type Registry struct {
	kinds []Kind // by name
}

// NewRegistry returns a registry of kinds, which need distinct names.
func NewRegistry(kinds ...Kind) (*Registry, error) {
	r := &Registry{}
	for _, k := range kinds {
		if err := recipes.CheckName(string(k.Name)); err != nil {
			return nil, fmt.Errorf("engines: kind %q: %w", k.Name, err)
		}
		if k.Engine == nil {
			return nil, fmt.Errorf("engines: kind %q has no Engine", k.Name)
		}
		if _, dup := r.Get(k.Name); dup {
			return nil, fmt.Errorf("engines: kind %q registered twice", k.Name)
		}
		r.kinds = append(r.kinds, k)
	}
	slices.SortFunc(r.kinds, func(a, b Kind) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return r, nil
}

// ErrUnknownKind: a recipe names an engine kind the registry lacks.
var ErrUnknownKind = errors.New("engines: unknown engine kind")

// Get returns the kind called name.
func (r *Registry) Get(name recipes.Engine) (Kind, bool) {
	i := slices.IndexFunc(r.kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return r.kinds[i], true
}

// Of returns the kind of recipe rc, or an error wrapping ErrUnknownKind
// that names the kinds there are.
func (r *Registry) Of(rc *recipes.Recipe) (Kind, error) {
	k, ok := r.Get(rc.EngineKind())
	if !ok {
		return Kind{}, fmt.Errorf("%w: recipe %s names engine %q; this node runs %s", ErrUnknownKind, rc.Name, rc.EngineKind(),
			strings.Join(r.Names(), ", "))
	}
	return k, nil
}

// Names lists the kinds' names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, len(r.kinds))
	for i, k := range r.kinds {
		names[i] = string(k.Name)
	}
	return names
}

// Check reports every recipe of lib whose engine kind the registry lacks,
// or whose contract.text drops the tool that ends its turns.
func (r *Registry) Check(lib *recipes.Library) error {
	var errs []error
	for _, name := range lib.Names() {
		rc, err := lib.Get(name)
		if err == nil {
			_, err = r.Of(rc)
		}
		if err == nil {
			err = r.checkContract(rc)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
