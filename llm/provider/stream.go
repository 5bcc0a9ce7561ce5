package provider

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/llm"
)

// Attempt makes one streamed call, yielding its parts. It reports whether
// any part of the answer was yielded (progress alone, llm.Part.Progress,
// is none), whether the consumer stopped the stream, and why the attempt
// failed.
type Attempt func() (yielded, stopped bool, err error)

// Stream runs attempt until it succeeds, the consumer stops, or r allows no
// further try; a final failure goes to yield.
//
// A failed attempt is retried (see Wait) only while nothing of the answer
// has been yielded: once a part has gone out, the consumer has part of an
// answer, and a fresh attempt would produce another answer that cannot be
// joined to it (the stream has no way to take parts back). The error is
// returned instead, and the engine ends the turn with a notice. Progress
// yielded before (argument fragments) does not count: the consumer keeps
// none of it, and the new attempt streams its calls from the start.
//
// Each retry is logged to log as a warning with fields, and told to the
// context's retry observer (WithRetryObserver); the errors of this package
// carry no key and no payload.
func (r Retry) Stream(ctx context.Context, log *zap.Logger, attempt Attempt, yield func(llm.Part, error) bool, fields ...zap.Field) {
	for n := 1; ; n++ {
		yielded, stopped, err := attempt()
		if err == nil || stopped {
			return
		}
		if ctx.Err() != nil {
			yield(llm.Part{}, fmt.Errorf("%s: %w", r.Provider, ctx.Err()))
			return
		}
		if yielded {
			if Retryable(err) {
				err = fmt.Errorf("%w (not retried: part of the answer was already delivered)", err)
			}
			yield(llm.Part{}, err)
			return
		}
		wait, final := r.Wait(ctx, err, n)
		if final != nil {
			yield(llm.Part{}, final)
			return
		}
		observeRetry(ctx, n, err)
		log.Warn("model call failed; retrying", append(fields[:len(fields):len(fields)],
			zap.Int("attempt", n),
			zap.Duration("wait", wait),
			zap.Error(err))...)
		if err := r.Sleep(ctx, wait); err != nil {
			yield(llm.Part{}, fmt.Errorf("%s: %w", r.Provider, err))
			return
		}
	}
}
