package rounds

import (
	"context"
	"errors"
	"fmt"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/tools"
)

// What reaches a running turn (engines.Turn's Halt and Interrupt) is the
// cause with which the model call in flight is cut.
var (
	errHalted      = errors.New("the process was paused, stopped or failed while the turn ran")
	errInterrupted = errors.New("a message arrived that cuts the model call in flight")
)

// NoticeHalted: the turn ended early, its process paused, stopped or failed
// while it ran.
const NoticeHalted = "turn_halted"

// HaltedCallError is the result of a tool call that a halted turn did not
// run.
const HaltedCallError = "Not run: the process was paused, stopped or failed before this call ran."

// steer ends a round that does not end the turn: it checkpoints what the
// round added and, when the checkpointer can (engines.Steerer), drains in
// the same step the messages that reached the turn meanwhile, for the next
// round's model call. An interrupt announced for a message drained here is
// spent: it must not cut the next call.
func (r *run) steer(ctx context.Context) {
	s, ok := r.cp.(engines.Steerer)
	if !ok || r.err != nil {
		r.save(ctx)
		return
	}
	drained, err := s.Steer(ctx, r.turn[r.committed:])
	if err != nil {
		r.err = fmt.Errorf("chat: turn %s: checkpoint: %w", r.t.ID, err)
		return
	}
	r.turn = append(r.turn, drained...)
	r.committed = len(r.turn)
	if len(drained) > 0 {
		select {
		case <-r.t.Interrupt:
		default:
		}
	}
}

// halted reports whether the turn has been told to end (engines.Turn.Halt).
func (r *run) halted() bool {
	select {
	case <-r.t.Halt:
		return true
	default:
		return false
	}
}

// cut returns ctx, cancelled with the cause errHalted when the turn is
// halted and, when interruptible, errInterrupted when a message cuts the
// model call in flight; stop releases it.
func (r *run) cut(ctx context.Context, interruptible bool) (cut context.Context, stop func()) {
	interrupt := r.t.Interrupt
	if !interruptible {
		interrupt = nil
	}
	if r.t.Halt == nil && interrupt == nil {
		return ctx, func() {}
	}
	cut, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-r.t.Halt:
			cancel(errHalted)
		case <-interrupt:
			cancel(errInterrupted)
		case <-done:
		}
	}()
	return cut, func() {
		close(done)
		cancel(nil)
	}
}

// cutShort handles a model call that ended with err: when a halt or an
// interrupt cut it (cause, the cause of its context), what the model wrote
// is kept for it and the turn ends (halted) or goes on to the next round
// (interrupted), and cutShort reports true.
func (r *run) cutShort(cause error, resp *llm.Response) (next lifecycle.Event, done, handled bool) {
	if !errors.Is(cause, errHalted) && !errors.Is(cause, errInterrupted) {
		return "", false, false
	}
	r.keepPartial(resp)
	if errors.Is(cause, errHalted) {
		return r.halt(), true, true
	}
	return "", false, true
}

// halt ends the turn of a process paused, stopped or failed while it ran:
// the lifecycle event Continue (the commit keeps the state set meanwhile),
// with a notice saying why the turn ended there.
func (r *run) halt() lifecycle.Event {
	r.halts = true
	r.add(byEngine, conversation.NewSystemNotice(NoticeHalted,
		"The turn ended early: the process was paused, stopped or failed while it ran. What it did so far is kept."))
	return lifecycle.Continue
}

// skip answers the calls a halted turn did not run, so that no call stays
// without a result.
func (r *run) skip(calls []conversation.ToolCall) {
	for _, c := range calls {
		r.result(c, tools.ErrorResult("%s", HaltedCallError))
	}
}
