package tools

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Sentinels. Errors of this package match them with errors.Is; their
// messages are written for whoever reads them (the model for call checks,
// the recipe author for Build) and do not repeat the sentinel's text.
var (
	// ErrUnknownTool: a call names a tool the registry does not have.
	ErrUnknownTool = errors.New("tools: unknown tool")
	// ErrInvalidArguments: a call's arguments are not JSON, not an object,
	// or do not match the tool's schema.
	ErrInvalidArguments = errors.New("tools: invalid arguments")
	// ErrInvalidDefinition: a tool given to NewRegistry has an empty or
	// duplicate name or an unusable schema.
	ErrInvalidDefinition = errors.New("tools: invalid tool definition")
	// ErrNotAvailable: a recipe names a tool no catalog provides.
	ErrNotAvailable = errors.New("tools: tool not available")
	// ErrNotImplemented: a recipe names a built-in that has no
	// implementation yet.
	ErrNotImplemented = errors.New("tools: tool not implemented yet")
	// ErrNoCaller: a tool that acts for its process was called with a
	// context that carries no [Caller] (see [WithCaller]).
	ErrNoCaller = errors.New("tools: no calling process")
)

// reasonError is an error with a message of its own that still matches a
// sentinel (and, optionally, a cause) with errors.Is and errors.As.
type reasonError struct {
	msg   string
	kind  error // a sentinel
	cause error // may be nil
}

func (e *reasonError) Error() string { return e.msg }

func (e *reasonError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// reason returns a reasonError matching kind, with a formatted message.
func reason(kind error, format string, a ...any) error {
	return &reasonError{msg: fmt.Sprintf(format, a...), kind: kind}
}

// InvalidArguments returns an error matching ErrInvalidArguments whose
// message is msg: for the runtime parts behind a tool (a [Scheduler]) that
// find what a call asked for invalid.
func InvalidArguments(msg string) error { return reason(ErrInvalidArguments, "%s", msg) }

// PanicError is the error [Registry.Invoke] reports for a tool that
// panicked. The model sees only [PanicError.Message]; the stack is for the
// operator's log.
type PanicError struct {
	Tool  string
	Value any    // what the tool panicked with
	Stack []byte // the goroutine's stack at the panic
}

// maxPanicText bounds the panic value quoted to the model.
const maxPanicText = 200

// Message is the text of the error result the model receives:
// "tool <name> failed: internal error (panic: <value>)".
func (e *PanicError) Message() string {
	v := fmt.Sprint(e.Value)
	if len(v) > maxPanicText {
		cut := maxPanicText
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut] + "…"
	}
	return fmt.Sprintf("tool %s failed: internal error (panic: %s)", e.Tool, v)
}

func (e *PanicError) Error() string { return "tools: " + e.Message() }

// Unwrap returns the panic value when it is an error (a runtime error, for
// one), so that errors.As reaches it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
