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

// demoModels maps every provider name that lib's recipes use (and
// "default") to the scripted demo model, which answers every turn with one
// respond saying that no provider is configured.
func demoModels(lib *recipes.Library) (map[string]llm.Model, error) {
	script, err := scripted.Parse(demoModelScript)
	if err != nil {
		return nil, fmt.Errorf("demo model: %w", err)
	}
	model := scripted.New(script).WithoutRecording()
	models := map[string]llm.Model{recipes.DefaultProvider: model}
	for _, p := range providers(lib) {
		models[p] = model
	}
	return models, nil
}

// providers returns the provider names lib's recipes use, sorted.
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
