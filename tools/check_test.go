package tools

import (
	"errors"
	"testing"
)

// richSchema exercises the message of each kind of schema violation.
const richSchema = `{
	"type": "object",
	"$defs": {"flag": {"type": "boolean"}},
	"properties": {
		"query": {"type": "string", "minLength": 2, "maxLength": 5},
		"limit": {"type": "integer", "minimum": 1, "maximum": 100},
		"ratio": {"type": "number", "multipleOf": 0.1, "exclusiveMaximum": 1},
		"mode": {"enum": ["fast", "exact"]},
		"kind": {"const": "table"},
		"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "uniqueItems": true},
		"flag": {"$ref": "#/$defs/flag"},
		"id": {"type": "string", "pattern": "^[a-z]+$"},
		"when": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
		"a/b": {"type": "string"},
		"filter": {
			"type": "object",
			"properties": {"field": {"type": "string"}},
			"required": ["field"],
			"additionalProperties": false
		}
	},
	"required": ["query"],
	"additionalProperties": false
}`

func TestCheck(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, RespondTool(), TellUserTool(), echo("search", richSchema), echo("noargs", objSchema))

	tests := []struct {
		name   string
		tool   string
		args   string
		want   string // "" when the call is valid
		wantIs error
	}{
		{name: "valid respond", tool: "respond", args: `{"message":"Done.","awaiting_user_input":false}`},
		{name: "respond without the flag", tool: "respond", args: `{"message":"Done."}`},
		{name: "valid rich call", tool: "search", args: `{"query":"go","limit":10,"ratio":0.3,"mode":"fast","tags":["a","b"],"flag":true,"when":null,"filter":{"field":"x"}}`},
		{name: "empty args are {}", tool: "noargs", args: ``},
		{name: "blank args are {}", tool: "noargs", args: " \n\t"},
		{name: "empty args still checked", tool: "respond", args: ``,
			want: "invalid arguments for respond: /message: missing required property", wantIs: ErrInvalidArguments},
		{
			name: "unknown tool", tool: "serch", args: `{}`,
			want:   `unknown tool "serch"; available tools: respond, tell_user, search, noargs`,
			wantIs: ErrUnknownTool,
		},
		{
			name: "truncated JSON", tool: "respond", args: `{"message`,
			want:   "arguments are not valid JSON (unexpected end of input at offset 9); send a JSON object",
			wantIs: ErrInvalidArguments,
		},
		{
			name: "bad character", tool: "respond", args: `{message: "hi"}`,
			want:   "arguments are not valid JSON (invalid character 'm' looking for beginning of object key string at offset 2); send a JSON object",
			wantIs: ErrInvalidArguments,
		},
		{
			name: "trailing data", tool: "respond", args: `{"message":"hi"} x`,
			want:   "arguments are not valid JSON (invalid character 'x' after top-level value at offset 18); send a JSON object",
			wantIs: ErrInvalidArguments,
		},
		{
			name: "null", tool: "noargs", args: `null`,
			want: "arguments must be a JSON object, got null; send a JSON object", wantIs: ErrInvalidArguments,
		},
		{
			name: "array", tool: "noargs", args: `[1]`,
			want: "arguments must be a JSON object, got an array; send a JSON object", wantIs: ErrInvalidArguments,
		},
		{
			name: "object encoded as a string", tool: "respond", args: `"{\"message\":\"hi\"}"`,
			want:   "arguments must be a JSON object, got a string holding JSON; send the object itself, not a string",
			wantIs: ErrInvalidArguments,
		},
		{
			name: "respond: two violations at once", tool: "respond", args: `{"awaiting_user_input":"no"}`,
			want:   "invalid arguments for respond: /awaiting_user_input: got string, want boolean; /message: missing required property",
			wantIs: ErrInvalidArguments,
		},
		{
			name: "respond: unknown property names the allowed ones", tool: "respond", args: `{"message":"hi","text":"hi"}`,
			want:   "invalid arguments for respond: /text: unknown property (allowed: awaiting_user_input, message)",
			wantIs: ErrInvalidArguments,
		},
		{
			name: "tell_user: wrong type", tool: "tell_user", args: `{"message":["a"]}`,
			want: "invalid arguments for tell_user: /message: got array, want string", wantIs: ErrInvalidArguments,
		},
		{
			name: "every kind of violation, all listed", tool: "search",
			args: `{"query":"x","limit":0.5,"ratio":1.25,"mode":"slow","kind":"chart","tags":["a","a","b"],` +
				`"flag":"yes","id":"A1","when":"soon","a/b":1,"filter":{"extra":1},"other":true}`,
			want: "invalid arguments for search: " +
				"/a~1b: got number, want string; " +
				"/filter/extra: unknown property, remove it; " +
				"/filter/field: missing required property; " +
				"/flag: got string, want boolean; " +
				"/id: does not match the pattern ^[a-z]+$; " +
				"/kind: must be \"table\"; " +
				"/limit: got number, want integer; " +
				"/mode: must be one of \"fast\", \"exact\"; " +
				"/other: unknown property (allowed: a/b, filter, flag, id, kind, limit, mode, query, ratio, tags, when); " +
				"/query: is 1 character long, want at least 2; " +
				"/ratio: is 1.25, want a multiple of 0.1; " +
				"/ratio: is 1.25, want less than 1; " +
				"/tags: has 3 items, want at most 2; " +
				"/tags: items 0 and 1 are equal, want unique items; " +
				"/when: matches none of the allowed forms: got string, want integer | got string, want null",
			wantIs: ErrInvalidArguments,
		},
		{
			name: "below minimum", tool: "search", args: `{"query":"go","limit":0}`,
			want: "invalid arguments for search: /limit: is 0, want at least 1", wantIs: ErrInvalidArguments,
		},
		{
			name: "too long", tool: "search", args: `{"query":"abcdef","limit":101}`,
			want:   "invalid arguments for search: /limit: is 101, want at most 100; /query: is 6 characters long, want at most 5",
			wantIs: ErrInvalidArguments,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := r.Check(call(tt.tool, tt.args))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check = nil, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Check error\n got: %s\nwant: %s", err, tt.want)
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("error does not match %v", tt.wantIs)
			}
		})
	}
}

// TestCheckDeterministic: properties are checked in map order inside the
// library; the message must not depend on it.
func TestCheckDeterministic(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, echo("search", richSchema))
	c := call("search", `{"query":1,"limit":"x","ratio":"y","mode":2,"tags":3,"flag":4,"id":5}`)
	first := r.Check(c).Error()
	for range 50 {
		if got := r.Check(c).Error(); got != first {
			t.Fatalf("messages differ between runs:\n%s\n%s", first, got)
		}
	}
}

// TestCheckNumbersExact: numbers are validated as decimals, not floats, so
// 0.3 is a multiple of 0.1 and big integers stay integers.
func TestCheckNumbersExact(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, echo("n", `{"type":"object","properties":{"r":{"multipleOf":0.1},"i":{"type":"integer"}}}`))
	if err := r.Check(call("n", `{"r":0.3,"i":123456789012345678901234567890}`)); err != nil {
		t.Errorf("Check = %v, want nil", err)
	}
}

func TestCheckCombinators(t *testing.T) {
	t.Parallel()
	const schema = `{
		"type": "object",
		"properties": {
			"one": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
			"shape": {"anyOf": [
				{"type": "object", "properties": {"w": {"type": "integer"}}, "required": ["w"]},
				{"type": "string"}
			]},
			"never": false,
			"not_null": {"not": {"type": "null"}}
		},
		"dependentRequired": {"start": ["end"]}
	}`
	r := mustRegistry(t, echo("c", schema))
	err := r.Check(call("c", `{"one":1,"shape":{"w":"x"},"never":1,"not_null":null,"start":1}`))
	want := "invalid arguments for c: " +
		"/end: missing, required when \"start\" is present; " +
		"/never: is not allowed; " +
		"/not_null: has a form that is not allowed; " +
		"/one: matches more than one of the allowed forms (1 and 2), want exactly one; " +
		"/shape: matches none of the allowed forms: /w: got string, want integer | got object, want string"
	if err == nil || err.Error() != want {
		t.Errorf("Check error\n got: %v\nwant: %s", err, want)
	}
}
