package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/engine-brain/brain/conversation"
)

// Registry is the set of tools one process may call. It is immutable once
// built and safe for concurrent use. A nil *Registry has no tools.
type Registry struct {
	defs      []Definition // registration order
	byName    map[string]*entry
	approvals map[string]Approval // by tool name: the recipe's (Catalog.Build)
}

// entry is one registered tool.
type entry struct {
	tool   Tool
	def    Definition
	schema *argSchema
}

// NewRegistry registers ts in order, compiling each argument schema once.
// It fails, naming the tool, on a nil tool, an empty or duplicate name, or
// a schema that is not valid JSON Schema for an object; the error matches
// [ErrInvalidDefinition].
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{
		defs:   make([]Definition, 0, len(ts)),
		byName: make(map[string]*entry, len(ts)),
	}
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("%w: tool %d is nil", ErrInvalidDefinition, i)
		}
		def := t.Definition()
		if def.Name == "" {
			return nil, fmt.Errorf("%w: tool %d has an empty name", ErrInvalidDefinition, i)
		}
		if _, dup := r.byName[def.Name]; dup {
			first := slices.IndexFunc(r.defs, func(d Definition) bool { return d.Name == def.Name })
			return nil, fmt.Errorf("%w: duplicate tool name %q (tools %d and %d)", ErrInvalidDefinition, def.Name, first, i)
		}
		def.Schema = bytes.Clone(def.Schema) // the tool cannot change it under us
		sch, err := compileSchema(def.Name, def.Schema)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q: %w", ErrInvalidDefinition, def.Name, err)
		}
		r.defs = append(r.defs, def)
		r.byName[def.Name] = &entry{tool: t, def: def, schema: sch}
		if o, ok := t.(offered); ok { // a gated tool stays gated where it is offered
			if a, ok := o.reg.Approval(def.Name); ok {
				if r.approvals == nil {
					r.approvals = make(map[string]Approval)
				}
				r.approvals[def.Name] = a
			}
		}
	}
	return r, nil
}

// Definitions returns the definitions of the tools in registration order,
// for the model request. The slice is the caller's; the Schema bytes are
// shared and must not be modified.
func (r *Registry) Definitions() []Definition {
	if r == nil {
		return nil
	}
	return slices.Clone(r.defs)
}

// Has reports whether the registry has a tool called name.
func (r *Registry) Has(name string) bool {
	return r.lookup(name) != nil
}

// Replayable reports whether every call in calls may run again after a
// node stopped midway (see [Definition.Replayable]). A call of an unknown
// tool is: it only gets an error result.
func (r *Registry) Replayable(calls []conversation.ToolCall) bool {
	for _, c := range calls {
		if e := r.lookup(c.Name); e != nil && !e.def.Replayable {
			return false
		}
	}
	return true
}

// Idempotent reports whether the tool called name is
// [Definition.Idempotent].
func (r *Registry) Idempotent(name string) bool {
	e := r.lookup(name)
	return e != nil && e.def.Idempotent
}

// Names returns the tool names in registration order.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	names := make([]string, len(r.defs))
	for i, d := range r.defs {
		names[i] = d.Name
	}
	return names
}

// Len returns the number of tools.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	return len(r.defs)
}

func (r *Registry) lookup(name string) *entry {
	if r == nil {
		return nil
	}
	return r.byName[name]
}

// Call checks call (see [Registry.Check]) and runs the tool. It never fails:
// a check error, an error returned by the tool and a panic in the tool all
// become an error result whose text tells the model what went wrong. Use
// [Registry.Invoke] to also learn why, for logging.
func (r *Registry) Call(ctx context.Context, call conversation.ToolCall) Result {
	res, _ := r.Invoke(ctx, call)
	return res
}

// Invoke is [Registry.Call] that also returns why the result is an error
// result, when the registry made it one:
//
//   - a [Registry.Check] error, matching [ErrUnknownTool] or
//     [ErrInvalidArguments] (the model's mistake: debug level);
//   - the error the tool returned, wrapped with the tool's name (so typed
//     control flow such as a tool's sentinel stays visible to errors.Is);
//   - a [*PanicError] carrying the stack, for the operator's log.
//
// The error is nil when the tool returned normally, including when it
// returned an error result itself.
func (r *Registry) Invoke(ctx context.Context, call conversation.ToolCall) (Result, error) {
	e, args, err := r.check(call)
	if err != nil {
		return errorResult(err.Error()), err
	}
	return e.run(ctx, args)
}

// run calls the tool, turning an error or a panic into an error result.
func (e *entry) run(ctx context.Context, args []byte) (res Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Tool: e.def.Name, Value: v, Stack: debug.Stack()}
			res, err = errorResult(pe.Message()), pe
		}
	}()
	res, err = e.tool.Call(ctx, args)
	if err != nil {
		return errorResult(err.Error()), fmt.Errorf("tool %q: %w", e.def.Name, err)
	}
	return res, nil
}

// Offer returns the tool of r that def describes as a Tool of its own, for
// a registry made of some of r's tools (a vogon phase's, a zaphod head's):
// its calls run through r, and a registry made with it keeps the approval
// r has for it. def may differ from r's own (a description that says
// more); the call is r's tool by def's name.
func (r *Registry) Offer(def Definition) Tool { return offered{reg: r, def: def} }

// offered is a tool of a registry, offered in another (Registry.Offer).
type offered struct {
	reg *Registry
	def Definition
}

func (o offered) Definition() Definition { return o.def }

func (o offered) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	return o.reg.Call(ctx, conversation.ToolCall{Name: o.def.Name, Arguments: args}), nil
}
