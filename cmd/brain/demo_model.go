package main

import (
	_ "embed"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/providers"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

//go:embed demo_model.yaml
var demoModelScript []byte

// demoModelWarning is logged when the demo model stands in for providers.
const demoModelWarning = "no model provider configured: using the scripted demo model"

// demoModel returns the scripted demo model, which answers every turn with
// one respond saying that no provider is configured. It stands for every
// provider when none is configured (see newModels).
func demoModel() (llm.Model, error) {
	script, err := scripted.Parse(demoModelScript)
	if err != nil {
		return nil, fmt.Errorf("demo model: %w", err)
	}
	return scripted.New(script).WithoutRecording(), nil
}

var _ brain.ModelResolver = (*providers.Set)(nil).Resolve

// newModels returns the models of the configured providers, whose first is
// the default; with none configured, every recipe gets the demo model
// (providers.Options.Fallback).
func newModels(configs []providers.Config, log *zap.Logger) (*providers.Set, error) {
	opts := providers.Options{Logger: log}
	if len(configs) == 0 {
		demo, err := demoModel()
		if err != nil {
			return nil, err
		}
		opts.Fallback = demo
	}
	return providers.New(configs, opts)
}

// recipeProviders returns the provider names lib's recipes use, sorted:
// those the demo model stands for, as the log says.
func recipeProviders(lib *recipes.Library) []string {
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
