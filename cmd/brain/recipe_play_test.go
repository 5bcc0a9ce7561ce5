package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
