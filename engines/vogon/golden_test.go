package vogon

import (
	"flag"
	"testing"

	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestGoldenTranscripts plays every vogon scenario under testdata/ and
// compares its transcript (every phase change and gate outcome) with the
// golden file.
func TestGoldenTranscripts(t *testing.T) {
	t.Parallel()
	enginetest.Golden(t, "engines/vogon", Kind, testRegistry, *update, 3)
}

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
