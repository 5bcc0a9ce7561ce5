package tools

import "context"

// Caller identifies the process a tool call runs for. The runtime puts it in
// the context of every tool call ([WithCaller]); tools that act for their
// process (spawn_worker, schedule_wakeup, cancel_wakeup) read it with
// [CallerFrom].
type Caller struct {
	// ProcessID is the id of the calling process.
	ProcessID string
	// Recipe is the name of the calling process's recipe.
	Recipe string
	// TurnID identifies the turn the call belongs to.
	TurnID string
	// Depth is how far below a top-level process the caller is: 0 for a
	// top-level process, 1 for its workers, and so on.
	Depth int
	// Owner is the user the calling process works for ("" for none).
	Owner string
	// CallKey identifies the call within its process, and is the same
	// when a resumed turn runs the call again (see
	// [Definition.Idempotent]): a tool keys its effect by it so that a
	// second run finds what the first did. "" when the runtime gives none.
	CallKey string
}

// callerKey is the context key of the Caller.
type callerKey struct{}

// WithCaller returns a copy of ctx that carries c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the Caller that ctx carries, and whether it carries
// one.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// callerOf returns the calling process of a call of the tool name, or an
// error matching [ErrNoCaller] when ctx carries none (or one without a
// process id): a runtime that forgot [WithCaller].
func callerOf(ctx context.Context, name string) (Caller, error) {
	c, ok := CallerFrom(ctx)
	if !ok || c.ProcessID == "" {
		return Caller{}, reason(ErrNoCaller, "%s: no calling process", name)
	}
	return c, nil
}
