package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/engine-brain/brain/conversation"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Check reports whether call can run: the tool exists, its arguments are a
// JSON object (empty arguments count as {}), and they match the tool's
// schema. The error's message is written for the model, saying what was
// wrong and how to fix it, e.g.
//
//	unknown tool "serch"; available tools: respond, tell_user
//	arguments are not valid JSON (unexpected end of input at offset 9); send a JSON object
//	invalid arguments for respond: /awaiting_user_input: got string, want boolean; /message: missing required property
//
// It lists every schema violation, sorted by location. The error matches
// [ErrUnknownTool] or [ErrInvalidArguments].
func (r *Registry) Check(call conversation.ToolCall) error {
	_, _, err := r.check(call)
	return err
}

// check is Check returning the entry and the arguments the tool is given.
func (r *Registry) check(call conversation.ToolCall) (*entry, []byte, error) {
	e := r.lookup(call.Name)
	if e == nil {
		return nil, nil, r.unknown(call.Name)
	}
	args, v, err := decodeArgs(call.Arguments)
	if err != nil {
		return nil, nil, err
	}
	if err := e.schema.compiled.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, nil, reason(ErrInvalidArguments, "invalid arguments for %s: %v", call.Name, err)
		}
		return nil, nil, &reasonError{
			msg:  "invalid arguments for " + call.Name + ": " + strings.Join(describe(ve, e.schema.props), "; "),
			kind: ErrInvalidArguments,
		}
	}
	return e, args, nil
}

// unknown returns the error for a call of a tool r does not have.
func (r *Registry) unknown(name string) error {
	if r.Len() == 0 {
		return reason(ErrUnknownTool, "unknown tool %q; no tools are available", name)
	}
	return reason(ErrUnknownTool, "unknown tool %q; available tools: %s", name, strings.Join(r.Names(), ", "))
}

// decodeArgs decodes a call's arguments for validation, numbers as
// json.Number so that no precision is lost. Empty arguments are {}.
func decodeArgs(raw json.RawMessage) ([]byte, any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}"), map[string]any{}, nil // a copy per call: tools may keep it
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || len(bytes.TrimSpace(raw[d.InputOffset():])) > 0 {
		return nil, nil, syntaxError(raw) // rare: describe it the way Unmarshal sees it
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, notObject(v)
	}
	return raw, v, nil
}

// syntaxError describes why raw is not JSON.
func syntaxError(raw []byte) error {
	var v any
	err := json.Unmarshal(raw, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg := strings.Replace(se.Error(), "unexpected end of JSON input", "unexpected end of input", 1)
		return reason(ErrInvalidArguments, "arguments are not valid JSON (%s at offset %d); send a JSON object", msg, se.Offset)
	}
	if err == nil {
		err = errors.New("malformed")
	}
	return reason(ErrInvalidArguments, "arguments are not valid JSON (%v); send a JSON object", err)
}

// notObject describes arguments that are JSON but not an object.
func notObject(v any) error {
	var got string
	switch v := v.(type) {
	case nil:
		got = "null"
	case bool:
		got = "a boolean"
	case json.Number:
		got = "a number"
	case []any:
		got = "an array"
	case string:
		if s := strings.TrimSpace(v); strings.HasPrefix(s, "{") && json.Valid([]byte(s)) {
			return reason(ErrInvalidArguments, "arguments must be a JSON object, got a string holding JSON; send the object itself, not a string")
		}
		got = "a string"
	default:
		got = "something else"
	}
	return reason(ErrInvalidArguments, "arguments must be a JSON object, got %s; send a JSON object", got)
}
