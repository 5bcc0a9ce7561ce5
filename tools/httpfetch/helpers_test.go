package httpfetch

import (
	"encoding/json"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
)

// mustRegistry builds a registry or fails the test.
func mustRegistry(t testing.TB, ts ...tools.Tool) *tools.Registry {
	t.Helper()
	r, err := tools.NewRegistry(ts...)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	return r
}

// call returns a tool call of name with args.
func call(name, args string) conversation.ToolCall {
	return conversation.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)}
}

// TestSchemaProviderSafe keeps http_fetch's schema within what the
// providers accept, as tools' TestBuiltinSchemasProviderSafe does for the
// other built-ins: an object schema refusing unknown properties, with
// nothing at its top level that the OpenAI or Anthropic APIs refuse.
func TestSchemaProviderSafe(t *testing.T) {
	t.Parallel()
	fetch, err := New(nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(fetch.Definition().Schema, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("schema is not an object schema: %v", err)
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf", "not", "enum", "const", "if", "$ref"} {
		if _, ok := schema[kw]; ok {
			t.Errorf("schema has %q at its top level", kw)
		}
	}
	if schema["additionalProperties"] != false {
		t.Error("schema does not refuse unknown properties")
	}
}

// jsonValue decodes s into generic JSON.
func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}
