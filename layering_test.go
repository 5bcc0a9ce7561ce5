package brain_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayering checks the arrows of docs/ARCHITECTURE.md's package map that
// the compiler does not: the packages below the runtime know no Redis and
// no HTTP (neither server nor client), inbox knows no recipes or tools, and
// engines reach tools only through their registry, never the MCP client.
func TestLayering(t *testing.T) {
	t.Parallel()
	const mod = "github.com/engine-brain/brain/"
	http := []string{"net/http", "net/http/httptest", "net/http/pprof", mod + "api", mod + "web"}
	redis := []string{"github.com/redis/go-redis/v9", "github.com/alicebob/miniredis/v2", mod + "store", mod + "internal/node"}
	rules := []struct {
		pkgs   string
		forbid []string
	}{
		{"./lifecycle", slices.Concat(redis, http)},
		{"./conversation", slices.Concat(redis, http)},
		{"./validators", slices.Concat(redis, http)},
		{"./tools", slices.Concat(redis, http)},
		{"./recipes", slices.Concat(redis, http)},
		{"./inbox/...", slices.Concat(redis, http, []string{mod + "recipes", mod + "tools"})},
		{"./engines/...", slices.Concat(redis, http, []string{mod + "tools/mcp", mod + "tools/toolset"})},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", r.pkgs).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", r.pkgs, err)
		}
		deps := strings.Fields(string(out))
		for _, f := range r.forbid {
			if slices.Contains(deps, f) {
				t.Errorf("%s depends on %s", r.pkgs, f)
			}
		}
	}
}
