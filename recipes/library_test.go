package recipes

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/inbox"
)

func intp(v int) *int           { return &v }
func boolp(v bool) *bool        { return &v }
func floatp(v float64) *float64 { return &v }

func TestLoadDirExtends(t *testing.T) {
	t.Parallel()
	lib, err := LoadDir("testdata/extends/ok")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"arthur", "base", "child", "default", "ford", "grandchild", "local_ford", "marvin-worker", "vogon-review", "web-research", "zaphod-panel"}
	if diff := cmp.Diff(want, lib.Names()); diff != "" {
		t.Errorf("Names() mismatch (-want +got):\n%s", diff)
	}

	got, err := lib.Get("grandchild")
	if err != nil {
		t.Fatal(err)
	}
	wantRecipe := &Recipe{
		Name:        "grandchild",
		Description: "The grandchild.",
		Extends:     "child",
		Model: Model{
			Provider:    "default",
			Temperature: floatp(0.7), // child replaces the scalar
			MaxTokens:   intp(1000),  // the rest of base's model stays
		},
		SystemPrompt: "Base prompt.",
		Tools:        []ToolRef{{Name: "respond"}}, // child's list replaces base's
		Validation: Validation{
			Enabled: boolp(true),
			DataRelay: DataRelay{
				MinToolResultChars: intp(800), // from base
				MaxReplyChars:      intp(100), // from child
			},
		},
		Steering: Steering{UserMessages: inbox.SteeringSteer}, // from base, through child
		Limits:   Limits{MaxRounds: 5},
		Presentation: Presentation{Links: map[string]string{
			"item":   "/items/{id}",
			"search": "/search?q={query}",
		}},
	}
	if diff := cmp.Diff(wantRecipe, got); diff != "" {
		t.Errorf("Get(grandchild) mismatch (-want +got):\n%s", diff)
	}

	// ford.yaml extends ford: it builds on the built-in ford and replaces it.
	ford, err := lib.Get("ford")
	if err != nil {
		t.Fatal(err)
	}
	builtinFord, _ := Builtin().Get("ford")
	if ford.Description != "A local ford." || ford.Validation.Corrections() != 5 ||
		!ford.ValidationOn() || ford.SystemPrompt != builtinFord.SystemPrompt {
		t.Errorf("local ford = %+v, want the built-in ford with description and max_corrections replaced", ford)
	}
	// local_ford extends the ford next to it, not the built-in one.
	local, _ := lib.Get("local_ford")
	if local.Validation.Corrections() != 5 {
		t.Errorf("local_ford max_corrections = %d, want 5 from the local ford", local.Validation.Corrections())
	}
}

func TestLoadDirErrors(t *testing.T) {
	t.Parallel()
	_, err := LoadDir("testdata/extends/broken")
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("LoadDir error = %v, want Errors", err)
	}
	want := "testdata/extends/broken/parent.yaml:5:5: tools[0]: unknown tool `respnd`; did you mean `respond`?\n" +
		"testdata/extends/broken/schema_child.yaml:4:1: colour: unknown field; the fields here are `a2a`, `contract`, `description`, `engine`, `extends`, `heads`, `limits`, `mcp_servers`, `model`, `name`, `phases`, `presentation`, `result_schema`, `steering`, `synthesis`, `system_prompt`, `tools`, `turn_end`, `validation`, `wakeup`\n" +
		"testdata/extends/broken/schema_parent.yaml:3:28: model.temprature: unknown field; did you mean `temperature`?"
	if diff := cmp.Diff(want, errs.Error()); diff != "" {
		t.Errorf("LoadDir errors mismatch (-want +got):\n%s", diff)
	}

	if _, err := LoadDir("testdata/no-such-dir"); err == nil {
		t.Error("LoadDir of a missing directory succeeded")
	}
}

func TestLibraryGet(t *testing.T) {
	t.Parallel()
	lib := Builtin()
	_, err := lib.Get("fordd")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(fordd) error = %v, want ErrNotFound", err)
	}
	if want := "recipes: recipe not found: \"fordd\"; did you mean `ford`?"; err.Error() != want {
		t.Errorf("Get(fordd) error = %q, want %q", err, want)
	}
	_, err = lib.Get("zzz")
	if want := "recipes: recipe not found: \"zzz\"; the recipes are `arthur`, `default`, `ford`, `marvin-worker`, `vogon-review`, `web-research`, `zaphod-panel`"; err.Error() != want {
		t.Errorf("Get(zzz) error = %q, want %q", err, want)
	}

	// Get returns a copy: changing it leaves the library alone.
	a, _ := lib.Get("web-research")
	a.Tools[0].Name = "changed"
	a.Presentation.Links["search"] = "changed"
	a.Model.HostedTools[0] = "changed"
	b, _ := lib.Get("web-research")
	if b.Tools[0].Name == "changed" || b.Presentation.Links["search"] == "changed" || b.Model.HostedTools[0] == "changed" {
		t.Error("changing a recipe from Get changed the library")
	}
}

func TestClone(t *testing.T) {
	t.Parallel()
	r := &Recipe{
		Name: "x",
		Tools: []ToolRef{{
			Name:     "http_fetch",
			Config:   map[string]any{"headers": map[string]any{"a": "b"}, "list": []any{1}},
			Approval: &Approval{By: ApproverUser, Timeout: Duration(time.Hour)},
		}},
		MCPServers: []MCPServer{{Name: "s", Command: "c", Args: []string{"a"}, Env: map[string]string{"K": "V"}}},
		Validation: Validation{MaxCorrections: intp(1)},
		Limits:     Limits{MaxDepth: 2, MaxWorkers: intp(4)},
	}
	r.ResultSchema = map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	c := r.Clone()
	if diff := cmp.Diff(r, c); diff != "" {
		t.Fatalf("Clone mismatch (-want +got):\n%s", diff)
	}
	c.Tools[0].Config["headers"].(map[string]any)["a"] = "changed"
	c.MCPServers[0].Env["K"] = "changed"
	c.Tools[0].Approval.By = ApproverOperator
	*c.Validation.MaxCorrections = 9
	*c.Limits.MaxWorkers = 9
	c.ResultSchema["properties"].(map[string]any)["n"] = "changed"
	if r.ResultSchema["properties"].(map[string]any)["n"] == "changed" {
		t.Error("changing the clone's result_schema changed the original")
	}
	if r.Tools[0].Config["headers"].(map[string]any)["a"] != "b" || r.MCPServers[0].Env["K"] != "V" ||
		*r.Validation.MaxCorrections != 1 || *r.Limits.MaxWorkers != 4 || r.Tools[0].Approval.By != ApproverUser {
		t.Error("changing the clone changed the original")
	}
}
