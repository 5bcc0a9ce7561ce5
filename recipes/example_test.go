package recipes_test

import (
	"fmt"

	"github.com/engine-brain/brain/recipes"
)

// A recipe builds on a built-in one with extends: mappings merge, lists
// replace, and the accessors fill in what the files leave out.
func ExampleParse() {
	src := []byte(`# yaml-language-server: $schema=./recipe.schema.json
name: support
extends: ford
description: Answers support questions.
tools:
  - respond
  - tell_user
  - name: http_fetch
    config: {timeout: 10s}
validation:
  max_corrections: 3
wakeup:
  schedules:
    - cron: "0 9 * * 1-5"
      message: Check the open tickets.
`)
	r, err := recipes.Parse("support.yaml", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Name, "extends", r.Extends)
	fmt.Println("engine:", r.EngineKind(), "turn_end:", r.TurnEndMode())
	fmt.Println("provider:", r.Model.Provider)
	for _, t := range r.Tools {
		fmt.Println("tool:", t.Name, t.Config)
	}
	fmt.Println("validation:", r.ValidationOn(), r.Validation.Corrections(), r.Validation.DataRelay.MinToolResult(), r.Validation.DataRelay.MaxReply())
	fmt.Println("max rounds:", r.Limits.Rounds())
	// Output:
	// support extends ford
	// engine: chat turn_end: respond
	// provider: default
	// tool: respond map[]
	// tool: tell_user map[]
	// tool: http_fetch map[timeout:10s]
	// validation: true 3 500 200
	// max rounds: 40
}

// Every problem is reported with its file, line, column and field, and how
// to fix it.
func ExampleParse_errors() {
	src := []byte(`name: support
model:
  provider: default
tools: [respond]
validation:
  enabled: true
  max_corrections: 40
`)
	_, err := recipes.Parse("support.yaml", src)
	fmt.Println(err)
	// Output:
	// support.yaml:7:20: validation.max_corrections: must be between 0 and 10 (got 40)
}

func ExampleBuiltin() {
	lib := recipes.Builtin()
	fmt.Println(lib.Names())
	worker, _ := lib.Get("marvin-worker")
	fmt.Println(worker.EngineKind(), worker.TurnEndMode())
	// Output:
	// [arthur default ford marvin-worker vogon-review web-research zaphod-panel]
	// worker finish_task
}

func ExampleLint() {
	for _, e := range recipes.Lint([]string{"chat", "worker"}, "testdata/bad/unknown_field.yaml") {
		fmt.Println(e)
	}
	// Output:
	// testdata/bad/unknown_field.yaml:5:1: systm_prompt: unknown field; did you mean `system_prompt`?
	// testdata/bad/unknown_field.yaml:9:3: validation.max_correction: unknown field; did you mean `max_corrections`?
	// testdata/bad/unknown_field.yaml:10:1: colour: unknown field; the fields here are `a2a`, `contract`, `description`, `engine`, `extends`, `heads`, `limits`, `mcp_servers`, `model`, `name`, `phases`, `presentation`, `result_schema`, `steering`, `synthesis`, `system_prompt`, `tools`, `turn_end`, `validation`, `wakeup`
}

// A tool entry's approval makes its calls wait for a person's decision; a
// `server.*` entry covers the server's tools, and an entry naming one tool
// exactly sets it apart.
func ExampleRecipe_ApprovalFor() {
	src := []byte(`name: ops
model: {provider: default}
tools:
  - respond
  - name: http_fetch
    approval: {by: user, timeout: 1h}
  - name: github.*
    approval: required
  - github.search_issues
mcp_servers:
  - {name: github, command: github-mcp-server}
`)
	r, err := recipes.Parse("ops.yaml", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, tool := range []string{"http_fetch", "github.create_issue", "github.search_issues", "respond"} {
		if a := r.ApprovalFor(tool); a != nil {
			fmt.Println(tool, "waits for the", a.By, "timeout", a.Timeout)
		} else {
			fmt.Println(tool, "runs at once")
		}
	}
	// Output:
	// http_fetch waits for the user timeout 1h0m0s
	// github.create_issue waits for the operator timeout 0s
	// github.search_issues runs at once
	// respond runs at once
}
