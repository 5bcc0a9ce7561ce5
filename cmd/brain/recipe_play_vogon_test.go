package main

import (
	"bytes"
	"testing"
)

// TestRecipeTestPlaysVogon: `brain recipe test` plays the built-in
// vogon-review pipeline offline, phase changes and gate refusals included.
func TestRecipeTestPlaysVogon(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := runRecipe([]string{"test", "--golden", "../../recipes/testdata/vogon-review.golden.txt",
		"vogon-review", "../../recipes/testdata/vogon-review.script.yaml"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}
