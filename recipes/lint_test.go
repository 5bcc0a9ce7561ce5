package recipes

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden .err files of testdata/bad")

// TestLintBad lints every testdata/bad/NAME.yaml and compares the output
// with testdata/bad/NAME.err. Run with -update to rewrite the .err files.
func TestLintBad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			errs := Lint(builtinKinds, file)
			if len(errs) == 0 {
				t.Fatalf("Lint(%s) found no problem", file)
			}
			got := errs.Error() + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".err"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./recipes/ -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("Lint(%s) mismatch (-%s +got); if the change is right, run go test ./recipes/ -update:\n%s", file, golden, diff)
			}
		})
	}
}

// TestLintBadCases makes sure that every case the recipe format promises to
// reject keeps its test, and that no golden file is left without its recipe.
func TestLintBadCases(t *testing.T) {
	t.Parallel()
	required := []string{
		"malformed_yaml", "unknown_field", "wrong_type", "missing_name", "missing_model",
		"unknown_engine", "unknown_tool", "invalid_cron", "extends_cycle", "extends_missing",
		"max_corrections_range", "empty", "approval", "approval_shape", "steering",
		"result_schema", "result_schema_chat", "heads_timeout", "heads_timeout_zero",
	}
	for _, name := range required {
		if _, err := os.Stat(filepath.Join("testdata/bad", name+".yaml")); err != nil {
			t.Errorf("missing bad case: %v", err)
		}
	}
	goldens, _ := filepath.Glob("testdata/bad/*.err")
	for _, g := range goldens {
		if _, err := os.Stat(strings.TrimSuffix(g, ".err") + ".yaml"); err != nil {
			t.Errorf("golden file %s has no recipe: %v", g, err)
		}
	}
}

// TestLintTooLarge checks that a 10 MB file is refused before it is parsed.
func TestLintTooLarge(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "huge.yaml")
	const size = 10 << 20
	line := "# " + strings.Repeat("x", 61) + "\n" // 64 bytes
	data := strings.Repeat(line, size/len(line))
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	want := Errors{{
		File: path, Line: 1, Col: 1,
		Message: "file is too large (10485760 bytes); a recipe file may hold at most 1048576 bytes (1 MiB): move long texts out or split it with `extends`",
	}}
	if diff := cmp.Diff(want, Lint(builtinKinds, path)); diff != "" {
		t.Errorf("Lint mismatch (-want +got):\n%s", diff)
	}
	_, err := Parse("huge.yaml", []byte(data))
	want[0].File = "huge.yaml"
	if diff := cmp.Diff(want.Error(), errString(err)); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
}

func TestLintFileProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	tests := []struct {
		path string
		want string
	}{
		{missing, missing + ": no such file"},
		{dir, dir + ": cannot read: is a directory; name its recipe files, such as " + filepath.Join(dir, "*.yaml")},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Lint(builtinKinds, tt.path).Error()); diff != "" {
			t.Errorf("Lint(%s) mismatch (-want +got):\n%s", tt.path, diff)
		}
	}
}

func TestLintBuiltins(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no built-in recipes: %v", err)
	}
	if errs := Lint(builtinKinds, files...); len(errs) > 0 {
		t.Errorf("built-in recipes have problems:\n%v", errs)
	}
}

// TestLintReportsOnce checks that a problem of a parent shared by several
// linted files is reported once, at the parent.
func TestLintReportsOnce(t *testing.T) {
	t.Parallel()
	errs := Lint(builtinKinds, "testdata/extends/broken/child.yaml", "testdata/extends/broken/other_child.yaml", "testdata/extends/broken/parent.yaml")
	want := "testdata/extends/broken/parent.yaml:5:5: tools[0]: unknown tool `respnd`; did you mean `respond`?"
	if diff := cmp.Diff(want, errs.Error()); diff != "" {
		t.Errorf("Lint mismatch (-want +got):\n%s", diff)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// builtinKinds are the engine kinds of a node without engines of its own
// (brain.DefaultEngines).
var builtinKinds = []string{string(EngineChat), string(EngineWorker), string(EngineVogon), string(EngineZaphod)}
