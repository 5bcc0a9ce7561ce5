package chat

import (
	"testing"

	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

// testRegistry builds the tool pool a recipe names from the built-ins and
// the test tools.
func testRegistry(t testing.TB, r *recipes.Recipe) *tools.Registry {
	t.Helper()
	reg, err := toolset.Build(enginetest.Catalog(), r)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
