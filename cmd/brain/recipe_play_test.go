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
