package main

import (
	_ "embed"
	"fmt"
	"slices"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

//go:embed demo_model.yaml
var demoModelScript []byte

// demoModelWarning is logged when the demo model stands in for providers.
const demoModelWarning = "no model provider configured: using the scripted demo model"

// demoModel returns the scripted demo model, which answers every turn with
// one respond saying that no provider is configured. It stands for every
// provider when none is configured (see providerSet).
func demoModel() (llm.Model, error) {
	script, err := scripted.Parse(demoModelScript)
	if err != nil {
		return nil, fmt.Errorf("demo model: %w", err)
	}
	return scripted.New(script).WithoutRecording(), nil
}

// providers returns the provider names lib's recipes use, sorted: those
// the demo model stands for, as the log says.
func providers(lib *recipes.Library) []string {
	var out []string
	for _, name := range lib.Names() {
		r, err := lib.Get(name)
		if err != nil {
			continue // listed by Names: never
		}
		p := r.Model.Provider
		if p == "" {
			p = recipes.DefaultProvider
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
