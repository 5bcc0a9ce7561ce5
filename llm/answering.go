package llm

import (
	"cmp"
	"context"
	"iter"
)

// Answering returns model with the usage it reports saying who answered,
// unless the usage says so already: provider, and the model name the call
// asked for (Params.Model), or defaultModel when it asked for none. In a
// fallback chain of such models the usage names the candidate that
// answered, not the first one asked.
func Answering(provider, defaultModel string, model Model) *Answered {
	return &Answered{provider: provider, defaultModel: defaultModel, model: model}
}

// Answered is a model whose usage says who answered (see Answering).
type Answered struct {
	provider, defaultModel string
	model                  Model
}

// Unwrap returns the model Answering was given.
func (a *Answered) Unwrap() Model { return a.model }

// Generate is the model's Generate, with the usage stamped.
func (a *Answered) Generate(ctx context.Context, req *Request) iter.Seq2[Part, error] {
	return func(yield func(Part, error) bool) {
		for p, err := range a.model.Generate(ctx, req) {
			if p.Usage != nil && p.Usage.Provider == "" {
				u := *p.Usage
				u.Provider, u.Model = a.provider, cmp.Or(req.Params.Model, a.defaultModel)
				p.Usage = &u
			}
			if !yield(p, err) {
				return
			}
		}
	}
}
