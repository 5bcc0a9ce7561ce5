package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/recipes"
)

func TestRecipeLint(t *testing.T) {
	t.Parallel()
	good, _ := filepath.Glob("../../recipes/*.yaml")
	bad, _ := filepath.Glob("../../recipes/testdata/bad/*.yaml")
	if len(good) == 0 || len(bad) == 0 {
		t.Fatal("no recipe files found")
	}
	position := regexp.MustCompile(`^\.\./\.\./recipes/testdata/bad/[a-z_]+\.yaml:\d+:\d+: `)
	tests := []struct {
		name      string
		args      []string
		wantCode  int
		wantOut   string // exact, unless empty
		checkBad  bool
		wantInErr string
	}{
		{name: "built-in recipes", args: append([]string{"lint"}, good...), wantCode: 0, wantOut: "ok: 7 recipe files\n"},
		{name: "bad recipes", args: append([]string{"lint"}, bad...), wantCode: 1, checkBad: true},
		{name: "no files", args: []string{"lint"}, wantCode: 2, wantInErr: "brain recipe lint: no files to check"},
		{name: "no subcommand", args: nil, wantCode: 2, wantInErr: "brain recipe: missing subcommand"},
		{name: "unknown subcommand", args: []string{"check"}, wantCode: 2, wantInErr: `brain recipe: unknown subcommand "check"`},
		{name: "schema with argument", args: []string{"schema", "x"}, wantCode: 2, wantInErr: `unexpected argument "x"`},
		{name: "help", args: []string{"help"}, wantCode: 0, wantOut: recipeUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := runRecipe(tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			if tt.wantOut != "" {
				if diff := cmp.Diff(tt.wantOut, stdout.String()); diff != "" {
					t.Errorf("stdout mismatch (-want +got):\n%s", diff)
				}
			}
			if tt.wantInErr != "" {
				if !strings.Contains(stderr.String(), tt.wantInErr) || !strings.Contains(stderr.String(), "Usage:") {
					t.Errorf("stderr = %q, want %q and the usage", stderr.String(), tt.wantInErr)
				}
				if stdout.Len() > 0 {
					t.Errorf("stdout = %q, want nothing", stdout.String())
				}
			}
			if tt.checkBad {
				lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
				summary, problems := lines[len(lines)-1], lines[:len(lines)-1]
				files := make(map[string]bool)
				for _, l := range problems {
					if !position.MatchString(l) {
						t.Errorf("line without file:line:col: %q", l)
					}
					files[l[:strings.Index(l, ".yaml:")]] = true
				}
				if len(files) != len(bad) {
					t.Errorf("problems reported in %d files, want all %d bad files", len(files), len(bad))
				}
				if !regexp.MustCompile(`^\d+ problems in \d+ files$`).MatchString(summary) {
					t.Errorf("summary line = %q", summary)
				}
				if stderr.Len() > 0 {
					t.Errorf("stderr = %q, want nothing", stderr.String())
				}
			}
		})
	}
}

func TestRecipeSchema(t *testing.T) {
	t.Parallel()
	committed, err := os.ReadFile("../../recipes/recipe.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runRecipe([]string{"schema"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, stderr: %s", code, stderr.String())
	}
	if !bytes.Equal(committed, stdout.Bytes()) {
		t.Errorf("brain recipe schema differs from recipes/recipe.schema.json; run `go run ./cmd/brain recipe schema > recipes/recipe.schema.json`")
	}
}

func TestRecipeBaseURLSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRecipe(t, dir, "bad.yaml", "name: bad\nextends: default\nmodel:\n  provider: openai\n  base_url: \"http://me:pw@127.0.0.1/v1\"\n")
	_, err := recipes.LoadDir(dir)
	if want := "bad.yaml:5:13: model.base_url: must be an http or https URL"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("load: %v, want an error saying %q", err, want)
	}
}
