package recipes

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/engine-brain/brain/tools"
	"github.com/google/go-cmp/cmp"
)

// The engines' contract texts (chat's respond convention, the worker's
// finish_task rule) belong to the engines, which add them to the prompt: a
// built-in recipe holds no copy of them.
var contractCopies = []string{"`respond` MUST be the LAST and ONLY tool call", "`finish_task` must be the LAST and"}

func TestBuiltin(t *testing.T) {
	t.Parallel()
	lib := Builtin()
	want := []string{"arthur", "default", "ford", "marvin-worker", "vogon-review", "web-research", "zaphod-panel"}
	if diff := cmp.Diff(want, lib.Names()); diff != "" {
		t.Fatalf("Names() mismatch (-want +got):\n%s", diff)
	}
	tests := []struct {
		name       string
		engine     Engine
		turnEnd    TurnEnd
		tools      []string
		validation bool
	}{
		{"default", EngineChat, TurnEndRespond, []string{"respond", "tell_user", "present_results"}, true}, // on by default in respond mode
		{"ford", EngineChat, TurnEndRespond, []string{"respond", "tell_user", "present_results"}, true},
		{"arthur", EngineChat, TurnEndRespond, []string{"respond", "tell_user", "spawn_worker"}, true},
		{"marvin-worker", EngineWorker, TurnEndFinishTask, []string{"http_fetch", "finish_task"}, false},
		{"web-research", EngineChat, TurnEndRespond, []string{"respond", "tell_user", "present_results"}, true},
		{"vogon-review", EngineVogon, TurnEndRespond, []string{"respond"}, true},
		{"zaphod-panel", EngineZaphod, TurnEndRespond, []string{"respond"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := lib.Get(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if r.Name != tt.name || r.EngineKind() != tt.engine || r.TurnEndMode() != tt.turnEnd || r.ValidationOn() != tt.validation {
				t.Errorf("got name %q engine %q turn_end %q validation %v, want %q %q %q %v",
					r.Name, r.EngineKind(), r.TurnEndMode(), r.ValidationOn(), tt.name, tt.engine, tt.turnEnd, tt.validation)
			}
			var names []string
			for _, tool := range r.Tools {
				names = append(names, tool.Name)
			}
			if diff := cmp.Diff(tt.tools, names); diff != "" {
				t.Errorf("tools mismatch (-want +got):\n%s", diff)
			}
			if r.Model.Provider != DefaultProvider {
				t.Errorf("model.provider = %q, want %q", r.Model.Provider, DefaultProvider)
			}
			if r.Description == "" {
				t.Error("no description")
			}
			for _, c := range contractCopies {
				if strings.Contains(r.SystemPrompt, c) || strings.Contains(r.Synthesis.SystemPrompt, c) {
					t.Errorf("system prompt holds a copy of an engine's contract text (%q); the engine adds it", c)
				}
			}
		})
	}

	web, _ := lib.Get("web-research")
	if diff := cmp.Diff([]string{"web_search"}, web.Model.HostedTools); diff != "" {
		t.Errorf("web-research hosted_tools mismatch (-want +got):\n%s", diff)
	}
	if len(web.Presentation.Links) == 0 {
		t.Error("web-research has no presentation.links")
	}
}

// TestBuiltinFiles checks what editors need: each embedded recipe starts
// with the yaml-language-server modeline pointing at the committed schema.
func TestBuiltinFiles(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(builtinFS, "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		data, err := fs.ReadFile(builtinFS, name)
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(data), "\n"); first != "# yaml-language-server: $schema=./recipe.schema.json" {
			t.Errorf("%s starts with %q, not the yaml-language-server modeline", name, first)
		}
	}
}

func TestTurnEndToolsAreBuiltin(t *testing.T) {
	t.Parallel()
	for _, name := range []string{toolRespond, toolFinishTask} {
		if !tools.IsBuiltin(name) {
			t.Errorf("%q is not a built-in tool", name)
		}
	}
}
