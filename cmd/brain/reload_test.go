package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/llm/providers"
	"github.com/engine-brain/brain/recipes"
)

// recipeSink records the libraries a reload hands over.
type recipeSink struct{ got []*recipes.Library }

func (s *recipeSink) SetRecipes(lib *recipes.Library) { s.got = append(s.got, lib) }

func writeRecipe(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRecipe(t, dir, "helper.yaml", "name: helper\nextends: default\ndescription: helps\n")
	models, err := newModels([]providers.Config{{Name: "local", Type: providers.TypeOpenAI, BaseURL: "http://127.0.0.1:1/v1"}}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	sink := &recipeSink{}
	r := &reloader{dir: dir, models: models, node: sink, log: zap.NewNop()}

	if err := r.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sink.got) != 1 {
		t.Fatalf("SetRecipes called %d times, want 1", len(sink.got))
	}
	if _, err := sink.got[0].Get("helper"); err != nil {
		t.Errorf("the reloaded recipes lack helper: %v", err)
	}

	// A broken file: the error names it, and the node keeps its recipes.
	writeRecipe(t, dir, "broken.yaml", "name: broken\nextends: default\nmax_rounds: lots\n")
	err = r.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "broken.yaml:3:") {
		t.Errorf("reload of a broken recipe: %v, want an error at broken.yaml:3", err)
	}
	if len(sink.got) != 1 {
		t.Errorf("SetRecipes called after a failed reload")
	}

	// A provider the server has no model for.
	if err := os.Remove(filepath.Join(dir, "broken.yaml")); err != nil {
		t.Fatal(err)
	}
	writeRecipe(t, dir, "other.yaml", "name: other\nextends: default\nmodel:\n  provider: elsewhere\n")
	err = r.Reload(context.Background())
	if want := `recipe other: model: no model provider named "elsewhere"; this server has local`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reload naming an unknown provider: %v, want an error saying %q", err, want)
	}
	if len(sink.got) != 1 {
		t.Errorf("SetRecipes called after a failed reload")
	}

	// An engine kind this server does not run.
	writeRecipe(t, dir, "other.yaml", "name: other\nengine: robot\nmodel:\n  provider: local\nturn_end: natural\n")
	err = r.Reload(context.Background())
	if want := `recipe other names engine "robot"; this node runs chat, vogon, worker`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reload naming an unknown engine: %v, want an error saying %q", err, want)
	}
	if len(sink.got) != 1 {
		t.Errorf("SetRecipes called after a failed reload")
	}

	// A configured provider at a base URL of the recipe's own.
	writeRecipe(t, dir, "other.yaml", "name: other\nextends: default\nmodel:\n  provider: local\n  base_url: http://127.0.0.1:2/v1\n")
	if err := r.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sink.got) != 2 {
		t.Errorf("SetRecipes called %d times, want 2", len(sink.got))
	}
}

// TestReloadDemo: with no provider configured, the demo model stands for
// every provider, those of reloaded recipes too.
func TestReloadDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRecipe(t, dir, "other.yaml", "name: other\nextends: default\nmodel:\n  provider: elsewhere\n")
	models, err := newModels(nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	sink := &recipeSink{}
	r := &reloader{dir: dir, models: models, node: sink, log: zap.NewNop()}
	if err := r.Reload(context.Background()); err != nil || len(sink.got) != 1 {
		t.Errorf("reload in demo mode: %v, %d libraries; want nil, 1", err, len(sink.got))
	}
}

func TestReloadWithoutDirectory(t *testing.T) {
	t.Parallel()
	sink := &recipeSink{}
	r := &reloader{node: sink, log: zap.NewNop()}
	if err := r.Reload(context.Background()); err != nil || len(sink.got) != 0 {
		t.Errorf("reload without --recipes: %v, %d libraries; want nil, 0", err, len(sink.got))
	}
}
