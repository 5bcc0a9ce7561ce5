package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireNodeEnv names the environment variable that turns a missing
// Node.js, or interop/node_modules not installed, from a skip into a
// failure. CI sets it to 1.
const RequireNodeEnv = "BRAIN_REQUIRE_NODE"

// Interop returns the node binary and the repository's interop folder,
// whose package.json pins the official clients the protocol faces are
// tested with, once they are installed (npm ci there; make test does it).
// Without them the test is skipped loudly, or fails when
// BRAIN_REQUIRE_NODE=1.
func Interop(t testing.TB) (node, dir string) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		msg := "interop test needs Node.js and the pinned clients: " + why +
			" (apt-get install -y nodejs npm, then: cd interop && npm ci)"
		if os.Getenv(RequireNodeEnv) == "1" {
			t.Fatal(msg + "; " + RequireNodeEnv + "=1 makes this a failure")
		}
		t.Skip("SKIPPED: " + msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("no node binary on PATH")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			dir = filepath.Join(d, "interop")
			break
		}
		if filepath.Dir(d) == d {
			t.Fatalf("testutil: no go.mod above %s", wd)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		missing(filepath.Join(dir, "node_modules") + " is not installed")
	}
	return node, dir
}
