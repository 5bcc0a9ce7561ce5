package chat

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

// The engine decides from tool calls alone, so what the model writes, and in
// which language, never changes a transition.
func TestTransitionsDoNotDependOnLanguage(t *testing.T) {
	t.Parallel()
	// A question back to the user and an announced action, per language.
	languages := map[string][2]string{
		"English":  {"Is there anything else I can do for you?", "I will look that up now."},
		"German":   {"Soll ich noch etwas für dich tun?", "Ich werde das jetzt nachschlagen."},
		"French":   {"Puis-je faire autre chose pour vous ?", "Je vais le chercher maintenant."},
		"Spanish":  {"¿Puedo hacer algo más por ti?", "Voy a buscarlo ahora."},
		"Japanese": {"他に何かお手伝いできることはありますか？", "今から調べます。"},
		"Chinese":  {"还有什么我可以帮你的吗？", "我现在去查一下。"},
		"Arabic":   {"هل هناك أي شيء آخر يمكنني فعله من أجلك؟", "سأبحث عن ذلك الآن."},
	}
	states := func(question, intent string) []string {
		s := &enginetest.Scenario{
			Recipe: recipes.Recipe{
				Name:       "test",
				Tools:      []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}},
				Validation: recipes.Validation{Enabled: new(true)},
			},
			Messages: []string{"first", "second", "third"},
			Script: scripted.Script{Turns: []scripted.Turn{
				// A question in respond(true): BLOCKED, never a correction.
				{Rounds: []scripted.Round{{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": question}}}}}},
				// An announced action as free text: corrected, whatever the language.
				{Rounds: []scripted.Round{
					{Text: intent},
					{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": intent}}}},
					{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": intent, "awaiting_user_input": false}}}},
				}},
				// A question as free text with the budget spent: fallback, BLOCKED.
				{Rounds: []scripted.Round{{Text: question}, {Text: question}, {Text: question}}},
			}},
		}
		sess := enginetest.Play(t, Kind, s, testRegistry(t, &s.Recipe))
		var out []string
		for _, e := range sess.Log {
			switch {
			case e.StateChange != nil:
				out = append(out, fmt.Sprintf("%s->%s", e.StateChange.From, e.StateChange.To))
			case e.ValidationCorrection != nil:
				out = append(out, "correction:"+e.ValidationCorrection.Validator)
			}
		}
		return out
	}
	want := states(languages["English"][0], languages["English"][1])
	if len(want) == 0 {
		t.Fatal("the English run recorded no transitions")
	}
	for lang, texts := range languages {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(want, states(texts[0], texts[1])); diff != "" {
				t.Errorf("%s transitions differ from English (-English +%s):\n%s", lang, lang, diff)
			}
		})
	}
}
