package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-brain/brain/tools/mcp/mcptest"
)

func TestRecipeTestReproducesGolden(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := runRecipe([]string{"test", "--golden", "../../recipes/testdata/default.golden.txt",
		"default", "../../recipes/testdata/default.script.yaml"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}

func TestRecipeTestReportsADifference(t *testing.T) {
	t.Parallel()
	golden := filepath.Join(t.TempDir(), "stale.txt")
	if err := os.WriteFile(golden, []byte("not the transcript\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runRecipe([]string{"test", "--golden", golden, "default", "../../recipes/testdata/default.script.yaml"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "transcript differs") {
		t.Fatalf("exit %d, stdout %q; want 1 and the difference reported", code, stdout.String())
	}
}

func TestRecipeTestPrintsUserViewAndStates(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := runRecipe([]string{"test", "default", "../../recipes/testdata/default.script.yaml"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"[state] RUNNING -> BLOCKED (await_user by engine)",
		"assistant: Got it, drafting your plan now.",
		"final state: BLOCKED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "I'll ask for the deadlines.") {
		t.Errorf("the model's aside beside respond reached the user view:\n%s", out)
	}
}

func TestRecipeTestMisuse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"test"}, 2, "want a recipe"},
		{[]string{"test", "--update", "default", "x.yaml"}, 2, "--update needs --golden"},
		{[]string{"test", "nosuch", "../../recipes/testdata/default.script.yaml"}, 1, `"nosuch"`},
		{[]string{"test", "default", "missing.yaml"}, 1, "missing.yaml"},
		{[]string{"test", "arthur", "../../recipes/testdata/default.script.yaml"}, 1, "not implemented yet"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := runRecipe(tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("brain recipe %v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr.String(), tt.code, tt.want)
		}
	}
}

// recipe test reaches a recipe's MCP servers: the script's call of an MCP
// tool runs on the server, under the name the model calls.
func TestRecipeTestCallsMCPTools(t *testing.T) {
	t.Parallel()
	srv := mcptest.Server("srv", mcptest.Tools)
	dir := t.TempDir()
	recipe := fmt.Sprintf("name: withmcp\nextends: default\ntools: [respond, srv.echo]\n"+
		"mcp_servers:\n  - {name: srv, command: %q, args: [%q], env: {%s: %q}}\n",
		srv.Command, srv.Args[0], "BRAIN_MCPTEST_MODE", srv.Env["BRAIN_MCPTEST_MODE"])
	script := "messages: [\"say hi\"]\nturns:\n  - rounds:\n" +
		"      - calls: [{name: srv__echo, args: {text: hi}}]\n" +
		"      - calls: [{name: respond, args: {message: \"The server said hi.\", awaiting_user_input: true}}]\n"
	writeRecipe(t, dir, "withmcp.yaml", recipe)
	writeRecipe(t, dir, "script.yaml", script)
	var stdout, stderr bytes.Buffer
	if code := runRecipe([]string{"test", filepath.Join(dir, "withmcp.yaml"), filepath.Join(dir, "script.yaml")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"tool srv__echo: echo: hi", "assistant: The server said hi.", "final state: BLOCKED"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("transcript lacks %q:\n%s", want, stdout.String())
		}
	}
}

// A play that goes wrong fails the test unless the script expects it: a
// mistyped tool, a model error, rounds the play never reaches. The default
// view shows the tool error and the notice.
func TestRecipeTestFailsOnWhatWentWrong(t *testing.T) {
	t.Parallel()
	const typo = "messages: [\"hi\"]\nturns:\n  - rounds:\n" +
		"      - calls: [{name: respnd, args: {message: hello, awaiting_user_input: true}}]\n" +
		"      - calls: [{name: respond, args: {message: hello, awaiting_user_input: true}}]\n"
	const modelError = "messages: [\"hi\"]\nturns:\n  - rounds:\n      - error: rate limited\n"
	const unused = "messages: [\"hi\"]\nturns:\n  - rounds:\n" +
		"      - calls: [{name: respond, args: {message: hello, awaiting_user_input: true}}]\n" +
		"  - rounds:\n      - text: never asked\n"
	tests := []struct {
		name, script string
		code         int
		stdout       []string
		stderr       []string
	}{
		{"mistyped tool", typo, 1,
			[]string{`[tool error] respnd: unknown tool "respnd"; available tools: respond`, "assistant: hello"},
			[]string{`unknown_tool: turn t1: unknown tool "respnd"`, "add `expect: [unknown_tool]`"}},
		{"mistyped tool expected", typo + "expect: [unknown_tool]\n", 0, []string{"[tool error] respnd"}, nil},
		{"model error", modelError, 1,
			[]string{"[notice model_error] The model call failed: scripted: rate limited"},
			[]string{"model_error: turn t1: model_error: The model call failed: scripted: rate limited"}},
		{"model error expected", modelError + "expect: [model_error]\n", 0, []string{"[notice model_error]"}, nil},
		{"unused rounds", unused, 1, nil, []string{"unused_rounds: the play never reached turns[1].rounds[0]"}},
		{"unused rounds expected", unused + "expect: [unused_rounds]\n", 0, nil, nil},
		{"expected but absent", unused + "expect: [unused_rounds, model_error]\n", 1, nil,
			[]string{"expects model_error, but the play had none"}},
		{"unknown expectation", unused + "expect: [typo]\n", 1, nil,
			[]string{`expect[0]: unknown expectation "typo"; want one of unknown_tool, model_error, unused_rounds`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeRecipe(t, dir, "script.yaml", tt.script)
			var stdout, stderr bytes.Buffer
			code := runRecipe([]string{"test", "default", filepath.Join(dir, "script.yaml")}, &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}

// --view raw prints every event; --view user what the user sees.
func TestRecipeTestViews(t *testing.T) {
	t.Parallel()
	script := "../../recipes/testdata/default.script.yaml"
	var raw, user, stderr bytes.Buffer
	if code := runRecipe([]string{"test", "--view", "raw", "default", script}, &raw, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"tool_call_request model: respond ", "chat_response model: message: I'll ask for the deadlines."} {
		if !strings.Contains(raw.String(), want) {
			t.Errorf("raw view lacks %q:\n%s", want, raw.String())
		}
	}
	if code := runRecipe([]string{"test", "--view", "user", "default", script}, &user, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(user.String(), "assistant: Gladly.") || strings.Contains(user.String(), "tool_call_request") {
		t.Errorf("user view:\n%s", user.String())
	}
	if code := runRecipe([]string{"test", "--view", "all", "default", script}, &user, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), `--view "all": want author, user or raw`) {
		t.Errorf("--view all: exit %d, stderr %q", code, stderr.String())
	}
}
