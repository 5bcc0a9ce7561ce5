package llm

import (
	"context"
	"errors"
	"testing"
)

// TestAnswering: the usage of a fallback chain of Answering models names
// the candidate that answered and the model it was asked for, or its
// default; a usage that already says who answered is left as it is.
func TestAnswering(t *testing.T) {
	t.Parallel()
	var asked []string
	usage := func(u Usage) []Part {
		return []Part{{Kind: PartText, Text: "hi"}, {Kind: PartUsage, Usage: &u}, {Kind: PartFinish, Finish: FinishStop}}
	}
	usageOf := func(m Model, model string) Usage {
		t.Helper()
		var got Usage
		for p, err := range m.Generate(context.Background(), &Request{Params: Params{Model: model}}) {
			if err != nil {
				t.Fatal(err)
			}
			if p.Usage != nil {
				got = *p.Usage
			}
		}
		return got
	}

	chain := Fallback(
		Candidate{Answering("anthropic", "", fixed{err: errors.New("down"), asked: &asked}), "big"},
		Candidate{Answering("local", "llama", fixed{parts: usage(Usage{InputTokens: 3}), asked: &asked}), ""},
	)
	if got, want := usageOf(chain, "big"), (Usage{Provider: "local", Model: "llama", InputTokens: 3}); got.Provider != want.Provider || got.Model != want.Model || got.InputTokens != want.InputTokens {
		t.Errorf("fallback's usage = %+v, want %+v", got, want)
	}
	named := Answering("openai", "gpt-default", fixed{parts: usage(Usage{OutputTokens: 2}), asked: &asked})
	if got := usageOf(named, "gpt-5"); got.Provider != "openai" || got.Model != "gpt-5" {
		t.Errorf("usage = %+v, want openai and the model asked for", got)
	}
	said := Answering("outer", "", fixed{parts: usage(Usage{Provider: "inner", Model: "m1"}), asked: &asked})
	if got := usageOf(said, "x"); got.Provider != "inner" || got.Model != "m1" {
		t.Errorf("usage that said who answered = %+v, want it kept", got)
	}
}
