package main

import (
	"context"
	_ "embed"
	"fmt"
	"iter"
	"slices"

	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/providers"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

//go:embed demo_model.yaml
var demoModelScript []byte

//go:embed demo_model_worker.yaml
var demoModelWorkerScript []byte

//go:embed demo_model_text.yaml
var demoModelTextScript []byte

// demoModelWarning is logged when the demo model stands in for providers.
const demoModelWarning = "no model provider configured: using the scripted demo model"

// demoModel returns the scripted demo model, which says that no provider is
// configured in the way each engine ends a turn: a chat recipe (respond
// offered) gets one respond, a worker (finish_task offered) a failed
// finish_task its parent reads, any other recipe one text answer. It stands
// for every provider when none is configured (see newModels).
func demoModel() (llm.Model, error) {
	m := &engineDemoModel{}
	for _, s := range []struct {
		dst  **scripted.Model
		data []byte
		name string
	}{
		{&m.chat, demoModelScript, "demo_model.yaml"},
		{&m.worker, demoModelWorkerScript, "demo_model_worker.yaml"},
		{&m.text, demoModelTextScript, "demo_model_text.yaml"},
	} {
		script, err := scripted.Parse(s.data)
		if err != nil {
			return nil, fmt.Errorf("demo model: %s: %w", s.name, err)
		}
		*s.dst = scripted.New(script).WithoutRecording()
	}
	return m, nil
}

// engineDemoModel picks the demo script that fits a request by the tool
// that ends its turn, offered in the request: the model cannot see the
// recipe, but a chat turn ends with respond and a worker's with finish_task.
type engineDemoModel struct {
	chat, worker, text *scripted.Model
}

var _ llm.Model = (*engineDemoModel)(nil)

func (m *engineDemoModel) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	offered := func(name string) bool {
		return slices.ContainsFunc(req.Tools, func(d llm.ToolDef) bool { return d.Name == name })
	}
	switch {
	case offered(tools.Respond):
		return m.chat.Generate(ctx, req)
	case offered(tools.FinishTask):
		return m.worker.Generate(ctx, req)
	default:
		return m.text.Generate(ctx, req)
	}
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
