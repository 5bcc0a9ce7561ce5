package zaphod

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

// TestSynthesisSeesRecipeOrder: heads that answer out of the recipe's
// order are shown to the synthesis in the recipe's order, a failed head
// named as failed, and each head is asked once, under its own prompt.
func TestSynthesisSeesRecipeOrder(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		scenario string
		want     []string
	}{
		{"out_of_order", []string{"## optimist\n\nYes: the tests pass.", "## skeptic\n\nNo: nobody is on call", "## pragmatist\n\nShip on Thursday instead."}},
		{"head_failing", []string{"## optimist (failed)\n\nHead optimist gave no answer: The model call failed: scripted: provider overloaded. Leave it out.", "## skeptic\n\nNo.", "## pragmatist\n\nThursday."}},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			t.Parallel()
			s := enginetest.Load(t, filepath.Join("testdata", tt.scenario+".yaml"))
			s.Recipe.Engine = recipes.EngineZaphod
			model := scripted.New(&s.Script)
			play(t, s, []string{"pragmatist", "skeptic", "optimist"}, nil, model)
			asked := map[string]int{}
			var synthesis string
			for _, req := range model.Requests() {
				asked[req.System]++
				if strings.HasPrefix(req.System, s.Recipe.Synthesis.SystemPrompt) {
					synthesis = req.System
				}
			}
			at := -1
			for _, w := range tt.want {
				i := strings.Index(synthesis, w)
				if i <= at {
					t.Fatalf("the synthesis's system prompt lacks %q after the answers before it:\n%s", w, synthesis)
				}
				at = i
			}
			for _, h := range s.Recipe.Heads { // its prompt, then the respond convention the engine adds
				if asked[h.SystemPrompt+"\n\n"+chat.Convention] == 0 {
					t.Errorf("head %s was never asked", h.Name)
				}
			}
		})
	}
}
