package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRecipeTestPlaysZaphodPanel: `brain recipe test zaphod-panel` plays
// the built-in panel offline, each head's answer shown to the author, the
// synthesis's reply to the user.
func TestRecipeTestPlaysZaphodPanel(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := runRecipe([]string{"test", "zaphod-panel", "../../recipes/testdata/zaphod-panel.script.yaml"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"[head optimist]: Yes: a Monday release",
		"[head skeptic]: Careful: Monday",
		"[head pragmatist]: Try Tuesday",
		"assistant: The panel leans towards moving off Friday.",
		"final state: BLOCKED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, out)
		}
	}
}
