package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

// readmeRecipe returns the yaml block after the README's "## A minimal
// recipe" heading, and the recipe's name.
func readmeRecipe(t *testing.T) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n## A minimal recipe\n")
	if !ok {
		t.Fatal(`README.md has no "## A minimal recipe" section`)
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	block, _, closed := strings.Cut(rest, "\n```")
	if !ok || !closed {
		t.Fatal(`README.md's "## A minimal recipe" section has no yaml block`)
	}
	for line := range strings.Lines(block) {
		if name, ok := strings.CutPrefix(line, "name:"); ok {
			return strings.TrimSpace(name), []byte(block + "\n")
		}
	}
	t.Fatal("the README's minimal recipe has no name")
	return "", nil
}

// The README's minimal recipe, copied from the README, lints clean and
// plays with the respond convention in the system prompt the model gets
// (its own system_prompt does not lose it), and with the validators on: a
// plain-text answer is sent back with a no_tool_call correction.
func TestReadmeMinimalRecipe(t *testing.T) {
	t.Parallel()
	name, block := readmeRecipe(t)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, block, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runRecipe([]string{"lint", path}, &stdout, &stderr); code != 0 {
		t.Fatalf("brain recipe lint %s: exit %d\n%s%s", path, code, stdout.String(), stderr.String())
	}

	r, err := loadRecipe(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reg, _, err := (&toolset.Builder{Catalog: toolset.Builtins()}).Build(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(&scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Text: "Monday: plan, Tuesday: do."},
		{Calls: []scripted.Call{{Name: tools.Respond, Args: map[string]any{"message": "Monday: plan, Tuesday: do.", "awaiting_user_input": true}}}},
	}}}})
	clock := engines.StepClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	kind, err := builtinEngines.Of(r)
	if err != nil {
		t.Fatal(err)
	}
	sess := engines.NewSession(kind.Engine, engines.Turn{Recipe: r, Model: model, Tools: reg}, clock)
	if _, err := sess.Say(tools.WithCaller(ctx, tools.Caller{ProcessID: "p1"}), "user", "Plan my week."); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2 (a plain answer, corrected, then respond)", len(reqs))
	}
	for i, req := range reqs {
		if !strings.HasPrefix(req.System, strings.TrimRight(r.SystemPrompt, "\n")) || !strings.Contains(req.System, chat.Convention) {
			t.Errorf("call %d: system prompt %q; want the recipe's, then the respond convention", i+1, req.System)
		}
	}
	if reqs[1].System != reqs[0].System {
		t.Error("the system prompt changed between rounds; it must stay the same (provider prompt caching)")
	}
	var corrections []string
	for _, e := range sess.Log {
		if c := e.ValidationCorrection; c != nil {
			corrections = append(corrections, c.Validator)
		}
	}
	if len(corrections) != 1 || corrections[0] != "no_tool_call" || sess.Status.State != lifecycle.Blocked {
		t.Errorf("corrections %v, state %s; want one no_tool_call correction, then BLOCKED by respond", corrections, sess.Status)
	}
}

func writeRecipes(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// brain recipe show prints the system prompt as the model gets it: the
// recipe's, then the engine's contract text, or the recipe's replacement;
// and the validation that runs.
func TestRecipeShow(t *testing.T) {
	t.Parallel()
	dir := writeRecipes(t, map[string]string{
		"helper":   "name: helper\nextends: default\nsystem_prompt: |\n  You help the user plan their week.\n",
		"quiet":    "name: quiet\nextends: default\nvalidation: {enabled: false}\n",
		"own":      "name: own\nextends: default\ncontract:\n  text: End every turn with one lone `respond` call.\n",
		"natural":  "name: natural\nextends: default\nturn_end: natural\n",
		"marvin-2": "name: marvin-2\nextends: marvin-worker\n",
	})
	tests := []struct {
		name     string
		has      []string
		hasNot   []string
		validate string
	}{
		{"helper", []string{"system_prompt: |\n  You help the user plan their week.\n\n  You always end your turn with exactly one call to the `respond` tool.\n"}, nil, "enabled: true"},
		{"quiet", []string{"You are a helpful assistant.", "`respond` MUST be the LAST and ONLY"}, nil, "enabled: false"},
		{"own", []string{"say so.\n\n  End every turn with one lone `respond` call.\n"}, []string{"MUST be the LAST", "contract:"}, "enabled: true"},
		{"natural", []string{"You are a helpful assistant."}, []string{"`respond` MUST be the LAST"}, "enabled: false"},
		{"marvin-2", []string{"only `finish_task` delivers", "Use `http_fetch`"}, nil, "enabled: false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			if code := runRecipe([]string{"show", tt.name, "--recipes", dir}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			out := stdout.String()
			for _, want := range append(tt.has, "validation:\n  "+tt.validate) {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, not := range tt.hasNot {
				if strings.Contains(out, not) {
					t.Errorf("output holds %q:\n%s", not, out)
				}
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := runRecipe([]string{"show", "nope", "--recipes", dir}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `"nope"`) {
		t.Errorf("show nope: exit %d, %q; want 1 and the name", code, stderr.String())
	}
}

// A contract.text that never names the tool ending the engine's turns is
// a lint problem at the field, and a node's registry refuses the recipe.
func TestLintContractText(t *testing.T) {
	t.Parallel()
	dir := writeRecipes(t, map[string]string{
		"lost":   "name: lost\nextends: default\ncontract:\n  text: Be brief.\n",
		"worker": "name: worker\nextends: marvin-worker\ncontract:\n  text: Call `respond` at the end.\n",
		"fine":   "name: fine\nextends: marvin-worker\ncontract:\n  text: Call `finish_task` alone at the end.\n",
	})
	var stdout, stderr bytes.Buffer
	code := runRecipe([]string{"lint", filepath.Join(dir, "lost.yaml"), filepath.Join(dir, "worker.yaml"), filepath.Join(dir, "fine.yaml")}, &stdout, &stderr)
	out := stdout.String()
	for _, want := range []string{
		"lost.yaml:4:9: contract.text: replaces the chat engine's contract text but never names `respond`",
		"worker.yaml:4:9: contract.text: replaces the worker engine's contract text but never names `finish_task`",
		"2 problems in 2 files",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 || strings.Contains(out, "fine.yaml") {
		t.Errorf("exit %d; want 1, and fine.yaml clean:\n%s", code, out)
	}
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := builtinEngines.Check(lib); err == nil || !strings.Contains(err.Error(), "recipe lost: contract.text never names `respond`") {
		t.Errorf("Registry.Check = %v; want recipe lost refused", err)
	}
}
