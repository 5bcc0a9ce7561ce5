package engines

import (
	"fmt"
	"strings"

	"github.com/engine-brain/brain/recipes"
)

// Terms is what an engine's contract asks of the model of a recipe's
// turns. The engine owns them, not the recipe: a recipe's system_prompt
// says only what the model is for, and extends cannot lose them.
type Terms struct {
	// Text tells the model how a turn ends (chat's respond convention, a
	// worker's finish_task rule); the engine adds it after the recipe's
	// system prompt (System). "" adds nothing.
	Text string
	// Ending names the tool that ends a turn, which a recipe's
	// contract.text replacing Text must name; "" when the model's free
	// text ends it (the natural mode).
	Ending string
}

// System returns the system prompt the model of recipe r's turns gets:
// r's system_prompt, then the engine's contract text t.Text, or r's
// contract.text, which replaces it. It is the same for every round of a
// turn, and of a process, so providers can cache it.
func System(r *recipes.Recipe, t Terms) string {
	text := t.Text
	if r.Contract.Text != "" {
		text = r.Contract.Text
	}
	prompt := strings.TrimRight(r.SystemPrompt, "\n")
	text = strings.TrimRight(text, "\n")
	switch {
	case text == "":
		return r.SystemPrompt
	case prompt == "":
		return text + "\n"
	default:
		return prompt + "\n\n" + text + "\n"
	}
}

// Terms returns the terms of recipe r's engine kind: none when the kind
// has no Terms, or the registry lacks the kind.
func (r *Registry) Terms(rc *recipes.Recipe) Terms {
	k, ok := r.Get(rc.EngineKind())
	if !ok || k.Terms == nil {
		return Terms{}
	}
	return k.Terms(rc)
}

// System returns the system prompt the model of recipe rc's turns gets
// (System with the terms of rc's kind), or an error wrapping
// ErrUnknownKind.
func (r *Registry) System(rc *recipes.Recipe) (string, error) {
	if _, err := r.Of(rc); err != nil {
		return "", err
	}
	return System(rc, r.Terms(rc)), nil
}

// Linter returns a recipes.Linter that checks recipes against the kinds:
// the engine a recipe names, and that a contract.text replacing a kind's
// own names the tool that ends its turns. The check lives here because
// only the engines know their contracts, and recipes cannot import them;
// recipes does the reporting, at the field's file, line and column.
func (r *Registry) Linter() recipes.Linter {
	return recipes.Linter{Engines: r.Names(), Ending: func(rc *recipes.Recipe) string { return r.Terms(rc).Ending }}
}

// checkContract reports a recipe whose contract.text leaves out the tool
// that ends its turns.
func (r *Registry) checkContract(rc *recipes.Recipe) error {
	tool := r.Terms(rc).Ending
	if rc.Contract.Text == "" || tool == "" || strings.Contains(rc.Contract.Text, tool) {
		return nil
	}
	return fmt.Errorf("engines: recipe %s: contract.text never names `%s`, the tool that ends a turn of the %s engine; say when and how to call it, or leave contract out for the engine's own text",
		rc.Name, tool, rc.EngineKind())
}
