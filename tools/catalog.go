package tools

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Ref is one entry of a recipe's tool list: a tool name and the settings
// the recipe gives it. (recipes imports tools, not the reverse, so this is
// a plain value the recipe loader fills.)
type Ref struct {
	Name   string
	Config map[string]any
	// Approval, when set, makes the tool's calls wait for a person's
	// decision (Registry.Approval).
	Approval *Approval
}

// Factory builds a tool from the settings a recipe gives it.
type Factory func(config map[string]any) (Tool, error)

// Catalog maps tool names to the factories that build them.
type Catalog map[string]Factory

// BuiltinCatalog returns the factories of the built-in tools implemented so
// far that need nothing but their settings (present_results takes the
// recipe's link templates as its config: {links: {name: template}}; the
// chat engine passes presentation.links). The caller owns the map and may
// add to it: the runtime adds the built-ins that act through it
// ([SpawnWorkerFactory], [ScheduleWakeupFactory], [CancelWakeupFactory]),
// and MCP tools or test tools.
func BuiltinCatalog() Catalog {
	return Catalog{
		Respond:        noConfig(Respond, RespondTool),
		TellUser:       noConfig(TellUser, TellUserTool),
		FinishTask:     finishTaskFactory,
		PresentResults: presentResultsFactory,
	}
}

// noConfig returns a factory for a tool that takes no settings.
func noConfig(name string, tool func() Tool) Factory {
	return func(config map[string]any) (Tool, error) {
		if len(config) > 0 {
			keys := slices.Sorted(maps.Keys(config))
			return nil, fmt.Errorf("%s takes no config (got: %s)", name, strings.Join(keys, ", "))
		}
		return tool(), nil
	}
}

// runtimeFactory returns a factory for a tool that takes no settings and
// acts through the runtime; ok says whether the runtime was given (a nil
// Spawner or Scheduler is a wiring mistake, reported when the registry is
// built rather than as a panic in a turn).
func runtimeFactory(name string, ok bool, tool func() Tool) Factory {
	build := noConfig(name, tool)
	return func(config map[string]any) (Tool, error) {
		if !ok {
			return nil, fmt.Errorf("%s has no runtime to act through (its factory was given nil)", name)
		}
		return build(config)
	}
}

// RefError is the error of one entry of a tool list. Its message names the
// tool; Index is the entry's position, for a caller that reports file
// positions (tools[2]).
type RefError struct {
	Index int
	Name  string
	Err   error
}

func (e *RefError) Error() string { return e.Err.Error() }
func (e *RefError) Unwrap() error { return e.Err }

// Build builds the registry of a tool list, in the list's order. It reports
// every entry it cannot build, each as a [*RefError], joined:
//
//	tool "serch" is not available (known: finish_task, respond, tell_user)   (matches ErrNotAvailable)
//	tool "spawn_worker" is not implemented yet                               (matches ErrNotImplemented)
//	tool "respond": respond takes no config (got: timeout)                   (the factory's error, wrapped)
//
// and then whatever NewRegistry reports (a name listed twice, say).
func (c Catalog) Build(refs []Ref) (*Registry, error) {
	ts := make([]Tool, 0, len(refs))
	var errs []error
	for i, ref := range refs {
		t, err := c.build(ref)
		if err != nil {
			errs = append(errs, &RefError{Index: i, Name: ref.Name, Err: err})
			continue
		}
		ts = append(ts, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	reg, err := NewRegistry(ts...)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		if ref.Approval != nil {
			if reg.approvals == nil {
				reg.approvals = make(map[string]Approval)
			}
			reg.approvals[ref.Name] = *ref.Approval
		}
	}
	return reg, nil
}

// build builds the tool of one reference.
func (c Catalog) build(ref Ref) (Tool, error) {
	f, ok := c[ref.Name]
	switch {
	case ref.Name == "":
		return nil, reason(ErrNotAvailable, "tool reference has no name")
	case ok && f != nil:
		t, err := f(ref.Config)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", ref.Name, err)
		}
		if t == nil {
			return nil, fmt.Errorf("tool %q: its factory returned no tool", ref.Name)
		}
		if got := t.Definition().Name; got != ref.Name {
			return nil, fmt.Errorf("tool %q: its factory built a tool named %q", ref.Name, got)
		}
		return t, nil
	case IsBuiltin(ref.Name):
		return nil, reason(ErrNotImplemented, "tool %q is not implemented yet", ref.Name)
	}
	return nil, reason(ErrNotAvailable, "tool %q is not available (known: %s)", ref.Name, strings.Join(c.names(), ", "))
}

// names returns the catalog's tool names, sorted.
func (c Catalog) names() []string {
	return slices.Sorted(maps.Keys(c))
}
