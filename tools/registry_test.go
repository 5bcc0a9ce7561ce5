package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
)

const objSchema = `{"type":"object"}`

func TestNewRegistryErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		tools []Tool
		want  string // substring of the error
	}{
		{"nil tool", []Tool{RespondTool(), nil}, "tool 1 is nil"},
		{"empty name", []Tool{echo("", objSchema)}, "tool 0 has an empty name"},
		{"duplicate", []Tool{RespondTool(), TellUserTool(), RespondTool()}, `duplicate tool name "respond" (tools 0 and 2)`},
		{"empty schema", []Tool{echo("x", "")}, `tool "x": schema is empty`},
		{"schema not JSON", []Tool{echo("x", `{"type":`)}, `tool "x": schema is not valid JSON`},
		{"schema not an object schema", []Tool{echo("x", `{"type":"string"}`)}, `tool "x": schema must describe an object`},
		{"schema array", []Tool{echo("x", `[]`)}, `tool "x": schema must describe an object`},
		{
			"schema violates the metaschema",
			[]Tool{echo("x", `{"type":"object","properties":{"a":{"type":5}}}`)},
			`tool "x": schema is not a valid JSON Schema: /properties/a/type: matches none of the allowed forms`,
		},
		{
			"dangling ref",
			[]Tool{echo("x", `{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`)},
			`tool "x": schema does not compile`,
		},
		{
			"ref to a file is refused",
			[]Tool{echo("x", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)},
			`schemas may refer only to themselves, not to file:///etc/passwd`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := NewRegistry(tt.tools...)
			if err == nil {
				t.Fatalf("NewRegistry = %v, want error containing %q", r, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalidDefinition) {
				t.Errorf("error %q does not match ErrInvalidDefinition", err)
			}
		})
	}
}

func TestRegistryDefinitions(t *testing.T) {
	t.Parallel()
	x := echo("x", "{\n  \"type\": \"object\"\n}")
	r := mustRegistry(t, TellUserTool(), x, RespondTool())

	var names []string
	for _, d := range r.Definitions() {
		names = append(names, d.Name)
		if d.Description == "" {
			t.Errorf("%s: empty description", d.Name)
		}
	}
	if diff := cmp.Diff([]string{"tell_user", "x", "respond"}, names); diff != "" {
		t.Errorf("definition order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tell_user", "x", "respond"}, r.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if r.Len() != 3 {
		t.Errorf("Len = %d, want 3", r.Len())
	}
	for _, name := range []string{"tell_user", "x", "respond"} {
		if !r.Has(name) {
			t.Errorf("Has(%q) = false", name)
		}
	}
	if r.Has("nope") {
		t.Error(`Has("nope") = true`)
	}

	// The registry keeps its own definitions: neither the caller of
	// Definitions nor the tool's own schema bytes can change them.
	defs := r.Definitions()
	defs[0].Name = "changed"
	if got := r.Definitions()[0].Name; got != "tell_user" {
		t.Errorf("after changing a returned definition, first name = %q", got)
	}
	x.(Func).Def.Schema[0] = '['
	if got := string(r.Definitions()[1].Schema); !strings.HasPrefix(got, "{") {
		t.Errorf("registered schema changed with the tool's bytes: %s", got)
	}
}

func TestNilRegistry(t *testing.T) {
	t.Parallel()
	var r *Registry
	if r.Has("respond") || r.Len() != 0 || r.Definitions() != nil || r.Names() != nil {
		t.Error("nil registry is not empty")
	}
	res := r.Call(context.Background(), call("respond", `{"message":"hi"}`))
	want := ErrorResult(`unknown tool "respond"; no tools are available`)
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Call (-want +got):\n%s", diff)
	}
}

func TestRegistryCall(t *testing.T) {
	t.Parallel()
	errBusy := errors.New("the index is being rebuilt; try again in a minute")
	var nilMap map[string]int
	tools := []Tool{
		echo("echo", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
		echo("noargs", objSchema),
		fn("fails", objSchema, func(context.Context, json.RawMessage) (Result, error) {
			return Result{}, errBusy
		}),
		fn("own_error", objSchema, func(context.Context, json.RawMessage) (Result, error) {
			return ErrorResult("row 9 does not exist"), nil
		}),
		fn("panics", objSchema, func(context.Context, json.RawMessage) (Result, error) {
			panic("kaboom")
		}),
		fn("nil_map", objSchema, func(context.Context, json.RawMessage) (Result, error) {
			nilMap["x"] = 1 // a runtime error, not a deliberate panic
			return Result{}, nil
		}),
		fn("panics_long", objSchema, func(context.Context, json.RawMessage) (Result, error) {
			panic(strings.Repeat("é", 300))
		}),
	}
	r := mustRegistry(t, tools...)

	tests := []struct {
		name    string
		call    string
		args    string
		want    Result
		wantErr func(error) bool // nil: Invoke returns no error
	}{
		{
			name: "valid call runs",
			call: "echo", args: `{"q":"go"}`,
			want: TextResult(`{"q":"go"}`),
		},
		{
			name: "empty arguments are {}",
			call: "noargs", args: "",
			want: TextResult(`{}`),
		},
		{
			name: "check error",
			call: "echo", args: `{}`,
			want:    ErrorResult("invalid arguments for echo: /q: missing required property"),
			wantErr: func(err error) bool { return errors.Is(err, ErrInvalidArguments) },
		},
		{
			name: "unknown tool",
			call: "ehco", args: `{}`,
			want:    ErrorResult(`unknown tool "ehco"; available tools: echo, noargs, fails, own_error, panics, nil_map, panics_long`),
			wantErr: func(err error) bool { return errors.Is(err, ErrUnknownTool) },
		},
		{
			name: "tool error becomes an error result",
			call: "fails", args: `{}`,
			want: ErrorResult("the index is being rebuilt; try again in a minute"),
			wantErr: func(err error) bool {
				return errors.Is(err, errBusy) && strings.HasPrefix(err.Error(), `tool "fails": `)
			},
		},
		{
			name: "tool's own error result passes unchanged",
			call: "own_error", args: `{}`,
			want: ErrorResult("row 9 does not exist"),
		},
		{
			name: "panic is recovered",
			call: "panics", args: `{}`,
			want: ErrorResult("tool panics failed: internal error (panic: kaboom)"),
			wantErr: func(err error) bool {
				var pe *PanicError
				return errors.As(err, &pe) && pe.Tool == "panics" && pe.Value == "kaboom" &&
					strings.Contains(string(pe.Stack), "registry_test.go")
			},
		},
		{
			name: "runtime error panic",
			call: "nil_map", args: `{}`,
			want: ErrorResult("tool nil_map failed: internal error (panic: assignment to entry in nil map)"),
			wantErr: func(err error) bool {
				var re interface{ RuntimeError() }
				return errors.As(err, &re)
			},
		},
		{
			name: "long panic value is cut",
			call: "panics_long", args: `{}`,
			want:    ErrorResult("tool panics_long failed: internal error (panic: %s…)", strings.Repeat("é", 100)),
			wantErr: func(err error) bool { return err != nil },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := call(tt.call, tt.args)
			if diff := cmp.Diff(tt.want, r.Call(context.Background(), c)); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
			res, err := r.Invoke(context.Background(), c)
			if diff := cmp.Diff(tt.want, res); diff != "" {
				t.Errorf("Invoke result (-want +got):\n%s", diff)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("Invoke error = %v, want nil", err)
			case tt.wantErr != nil && !tt.wantErr(err):
				t.Errorf("Invoke error = %#v (%v), not the one expected", err, err)
			}
		})
	}
}

func TestRegistryPassesContext(t *testing.T) {
	t.Parallel()
	type key struct{}
	r := mustRegistry(t, fn("ctx", objSchema, func(ctx context.Context, _ json.RawMessage) (Result, error) {
		return TextResult(fmt.Sprint(ctx.Value(key{}))), nil
	}))
	ctx := context.WithValue(context.Background(), key{}, "v")
	if got := r.Call(ctx, call("ctx", "{}")).Text(); got != "v" {
		t.Errorf("tool saw context value %q, want %q", got, "v")
	}
}

// TestRegistryConcurrent calls one registry from many goroutines; run with
// -race.
func TestRegistryConcurrent(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, RespondTool(), TellUserTool())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				msg := fmt.Sprintf("m%d-%d", i, j)
				res := r.Call(context.Background(), call("tell_user", `{"message":"`+msg+`"}`))
				if res.IsError || res.Content[0].Text != msg {
					t.Errorf("tell_user(%s) = %+v", msg, res)
					return
				}
				if err := r.Check(call("respond", `{"message":1}`)); err == nil {
					t.Error("Check accepted a number message")
					return
				}
				_ = r.Definitions()
			}
		}()
	}
	wg.Wait()
}

func TestReplayable(t *testing.T) {
	t.Parallel()
	effect := Func{Def: Definition{Name: "charge_card", Description: "Charges.", Schema: json.RawMessage(`{"type":"object"}`)},
		Fn: func(context.Context, json.RawMessage) (Result, error) { return TextResult("ok"), nil }}
	reg, err := NewRegistry(RespondTool(), TellUserTool(), effect)
	if err != nil {
		t.Fatal(err)
	}
	call := func(names ...string) []conversation.ToolCall {
		var cs []conversation.ToolCall
		for _, n := range names {
			cs = append(cs, conversation.ToolCall{Name: n})
		}
		return cs
	}
	for _, tt := range []struct {
		calls []conversation.ToolCall
		want  bool
	}{
		{call("tell_user", "respond"), true},
		{call("tell_user", "charge_card"), false},
		{call("no_such_tool"), true},
		{nil, true},
	} {
		if got := reg.Replayable(tt.calls); got != tt.want {
			t.Errorf("Replayable(%v) = %v, want %v", tt.calls, got, tt.want)
		}
	}
}

func TestCheckSchema(t *testing.T) {
	t.Parallel()
	if err := CheckSchema(json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)); err != nil {
		t.Errorf("a valid schema: %v", err)
	}
	for raw, want := range map[string]string{
		``:                 "schema is empty",
		`{"type":"array"}`: "must describe an object",
		`{"type":"object","properties":{"q":{"type":"nope"}}}`: "not a valid JSON Schema",
	} {
		if err := CheckSchema(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSchema(%q) = %v, want an error saying %q", raw, err, want)
		}
	}
}
