package llm_test

import (
	"testing"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
)

func TestWithContextTokens(t *testing.T) {
	t.Parallel()
	var m llm.Model = llm.WithContextTokens(scripted.New(&scripted.Script{}), 8000)
	w, ok := m.(llm.Windowed)
	if !ok || w.ContextTokens() != 8000 {
		t.Errorf("WithContextTokens(8000): %v, %v; want a Windowed model of 8000", m, ok)
	}
}
