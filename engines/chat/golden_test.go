package chat

import (
	"flag"
	"testing"

	"github.com/engine-brain/brain/engines/enginetest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestGoldenTranscripts plays every scenario of the turn protocol under
// testdata/ and compares its transcript with the golden file.
func TestGoldenTranscripts(t *testing.T) {
	t.Parallel()
	enginetest.Golden(t, "engines/chat", Kind, testRegistry, *update, 15)
}
