package toolset

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/mcp"
)

// A registry built while an MCP server was down is not kept: every turn
// gets one with the recipe's other tools, and the next build tries again.
// Turns of one recipe share a build.
func TestCacheRebuildsWithoutADeadServer(t *testing.T) {
	t.Parallel()
	pool, err := mcp.NewPool(mcp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	lib := NewCache(Builder{Catalog: tools.BuiltinCatalog(), MCP: pool})
	r := &recipes.Recipe{
		Name:       "dead",
		Tools:      []recipes.ToolRef{{Name: "respond"}, {Name: "gone.search"}},
		MCPServers: []recipes.MCPServer{{Name: "gone", Command: filepath.Join(t.TempDir(), "no-such-server")}},
	}
	regs := make([]*tools.Registry, 4)
	var wg sync.WaitGroup
	for i := range regs {
		wg.Go(func() {
			reg, err := lib.Tools(r)
			if err != nil {
				t.Error(err)
			}
			regs[i] = reg
		})
	}
	wg.Wait()
	for _, reg := range regs {
		if diff := cmp.Diff([]string{"respond", "gone__search"}, reg.Names()); diff != "" {
			t.Fatalf("tools (-want +got):\n%s", diff)
		}
	}
	lib.mu.Lock()
	kept := len(lib.byName)
	lib.mu.Unlock()
	if kept != 0 {
		t.Errorf("cache kept %d registries built without a server; want none", kept)
	}

	// A complete registry is kept.
	ok := &recipes.Recipe{Name: "ok", Tools: []recipes.ToolRef{{Name: "respond"}}}
	a, err := lib.Tools(ok)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := lib.Tools(ok); a != b {
		t.Error("the registry of a recipe without MCP servers was built twice")
	}
}
