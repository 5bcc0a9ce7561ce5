package recipes

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/engine-brain/brain/tools"
	"github.com/google/go-cmp/cmp"
)

const respondConvention = "`respond` MUST be the LAST and ONLY tool call in its response."

func TestBuiltin(t *testing.T) {
	t.Parallel()
	lib := Builtin()
	want := []string{"arthur", "default", "ford", "marvin-worker", "web-research", "zaphod-panel"}
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
		{"default", EngineChat, TurnEndRespond, []string{"respond", "tell_user", "present_results"}, false},
		{"ford", EngineChat, TurnEndRespond, []string{"respond", "tell_user", "present_results"}, true},
		{"arthur", EngineChat, TurnEndRespond, []string{"respond", "tell_user", "spawn_worker"}, true},
		{"marvin-worker", EngineWorker, TurnEndFinishTask, []string{"http_fetch", "finish_task"}, false},
		{"web-research", EngineChat, TurnEndRespond, []string{"respond", "tell_user", "present_results"}, true},
		{"zaphod-panel", EngineZaphod, TurnEndRespond, []string{"respond"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := lib.Get(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if r.Name != tt.name || r.EngineKind() != tt.engine || r.TurnEndMode() != tt.turnEnd || r.Validation.Enabled != tt.validation {
				t.Errorf("got name %q engine %q turn_end %q validation %v, want %q %q %q %v",
					r.Name, r.EngineKind(), r.TurnEndMode(), r.Validation.Enabled, tt.name, tt.engine, tt.turnEnd, tt.validation)
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
			prompt := r.SystemPrompt
			if r.EngineKind() == EngineZaphod { // the synthesis responds
				prompt = r.Synthesis.SystemPrompt
			}
			if got := strings.Contains(prompt, respondConvention); got != (tt.turnEnd == TurnEndRespond) {
				t.Errorf("system prompt holds the respond convention block: %v, want %v", got, tt.turnEnd == TurnEndRespond)
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
