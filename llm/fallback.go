package llm

import (
	"context"
	"iter"
)

// Candidate is one model of a [Fallback] chain: the model and the name to
// ask it for (Params.Model of the request; empty means the model's own
// default).
type Candidate struct {
	Model Model
	Name  string
}

// Fallback returns a model that asks each candidate in turn until one
// answers. A candidate is left for the next only when it fails before any
// part of its answer arrived (its adapter has already spent its retries;
// progress, see Part.Progress, is passed on but is no part of the answer);
// once parts arrived, its error ends the stream, as a cut answer cannot be
// continued by another model. A cancelled or timed-out call is never passed
// on. With one candidate, Fallback returns it unchanged.
func Fallback(candidates ...Candidate) Model {
	if len(candidates) == 1 {
		return renamed(candidates[0])
	}
	return fallback(candidates)
}

type fallback []Candidate

func (f fallback) Generate(ctx context.Context, req *Request) iter.Seq2[Part, error] {
	return func(yield func(Part, error) bool) {
		var errs []error
		for _, c := range f {
			yielded := false
			var failed error
			for p, err := range renamed(c).Generate(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				yielded = yielded || !p.Progress()
				if !yield(p, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			if yielded || ctx.Err() != nil {
				yield(Part{}, failed)
				return
			}
			errs = append(errs, failed)
		}
		yield(Part{}, &FallbackError{Errs: errs})
	}
}

// renamed is a candidate that asks its model for its name.
func renamed(c Candidate) Model {
	return modelFunc(func(ctx context.Context, req *Request) iter.Seq2[Part, error] {
		if req.Params.Model != c.Name {
			r := *req
			r.Params.Model = c.Name
			req = &r
		}
		return c.Model.Generate(ctx, req)
	})
}

type modelFunc func(ctx context.Context, req *Request) iter.Seq2[Part, error]

func (f modelFunc) Generate(ctx context.Context, req *Request) iter.Seq2[Part, error] {
	return f(ctx, req)
}

// FallbackError is the failure of every candidate of a chain, in order. It
// matches (errors.Is, errors.As) what any of them matches.
type FallbackError struct {
	Errs []error
}

func (e *FallbackError) Error() string {
	s := "every model of the fallback chain failed: "
	for i, err := range e.Errs {
		if i > 0 {
			s += "; then "
		}
		s += err.Error()
	}
	return s
}

func (e *FallbackError) Unwrap() []error { return e.Errs }
