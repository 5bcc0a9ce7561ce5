package brain_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayering checks the arrows of docs/ARCHITECTURE.md's package map that
// the compiler does not: the packages below the runtime know no Redis and
// serve no HTTP, and engines reach tools only through their registry, never
// the MCP client.
func TestLayering(t *testing.T) {
	t.Parallel()
	const mod = "github.com/engine-brain/brain/"
	serving := []string{"net/http/httptest", "net/http/pprof", mod + "api", mod + "web"}
	redis := []string{"github.com/redis/go-redis/v9", "github.com/alicebob/miniredis/v2", mod + "store", mod + "internal/node"}
	rules := []struct {
		pkgs   string
		forbid []string
	}{
		{"./lifecycle", append(redis, serving...)},
		{"./conversation", append(redis, serving...)},
		{"./validators", append(redis, serving...)},
		{"./inbox/...", append(append(redis, serving...), mod+"recipes")},
		{"./engines/...", append(append(redis, serving...), mod+"tools/mcp", mod+"tools/toolset")},
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
