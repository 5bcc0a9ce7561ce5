package recipes

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/inbox"
)

// TestSchemaCommitted fails when recipes/recipe.schema.json is stale.
func TestSchemaCommitted(t *testing.T) {
	t.Parallel()
	committed, err := os.ReadFile("recipe.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(committed), string(Schema())); diff != "" {
		t.Errorf("recipe.schema.json is stale; run `go run ./cmd/brain recipe schema > recipes/recipe.schema.json` (-committed +generated):\n%s", diff)
	}
}

func TestSchemaShape(t *testing.T) {
	t.Parallel()
	s := Schema()
	if !bytes.Equal(s, Schema()) {
		t.Error("Schema() differs between calls")
	}
	if !bytes.HasSuffix(s, []byte("}\n")) {
		t.Error("Schema() does not end with a newline")
	}
	var doc map[string]any
	if err := json.Unmarshal(s, &doc); err != nil {
		t.Fatal(err)
	}
	if got, want := doc["$schema"], "https://json-schema.org/draft/2020-12/schema"; got != want {
		t.Errorf("$schema = %v, want %v", got, want)
	}
	if got := doc["$id"]; got != SchemaID {
		t.Errorf("$id = %v, want %v", got, SchemaID)
	}
	// Every object with properties refuses unknown ones.
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["properties"]; ok && v["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is not false", path)
			}
			for k, e := range v {
				walk(path+"/"+k, e)
			}
		case []any:
			for _, e := range v {
				walk(path+"/[]", e)
			}
		}
	}
	walk("#", doc)
}

// TestSchemaPatternWords makes sure every pattern of the schema has its
// words in messages.
func TestSchemaPatternWords(t *testing.T) {
	t.Parallel()
	eachSchemaObject(t, func(v map[string]any) {
		if p, ok := v["pattern"].(string); ok {
			if _, ok := patternWords[p]; !ok {
				t.Errorf("pattern %q has no entry in patternWords", p)
			}
		}
	})
}

// eachSchemaObject calls visit with every object of the recipe schema.
func eachSchemaObject(t *testing.T, visit func(map[string]any)) {
	t.Helper()
	var doc any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			visit(v)
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
}

// TestSchemaRanges checks that the schema bounds limits.max_context_tokens
// and limits.max_log_events as the constants say (brain serve bounds its
// own settings of them with those).
func TestSchemaRanges(t *testing.T) {
	t.Parallel()
	for property, want := range map[string][2]int{
		"max_context_tokens": {MinContextTokens, MaxContextTokens},
		"max_log_events":     {MinLogEvents, MaxLogEvents},
	} {
		var found []map[string]any
		eachSchemaObject(t, func(v map[string]any) {
			if props, ok := v["properties"].(map[string]any); ok {
				if p, ok := props[property].(map[string]any); ok {
					found = append(found, p)
				}
			}
		})
		if len(found) != 1 {
			t.Fatalf("%d %s properties in the schema, want 1", len(found), property)
		}
		if got := found[0]; got["minimum"] != float64(want[0]) || got["maximum"] != float64(want[1]) {
			t.Errorf("%s is %v to %v in the schema, want %d to %d", property, got["minimum"], got["maximum"], want[0], want[1])
		}
	}
}

// TestSchemaSteerings checks that the schema's values of
// steering.user_messages are inbox's steerings, the default first.
func TestSchemaSteerings(t *testing.T) {
	t.Parallel()
	var found []map[string]any
	eachSchemaObject(t, func(v map[string]any) {
		if props, ok := v["properties"].(map[string]any); ok {
			if p, ok := props["user_messages"].(map[string]any); ok {
				found = append(found, p)
			}
		}
	})
	if len(found) != 1 {
		t.Fatalf("%d user_messages properties in the schema, want 1", len(found))
	}
	var want []any
	for _, s := range inbox.Steerings() {
		want = append(want, string(s))
	}
	if diff := cmp.Diff(want, found[0]["enum"]); diff != "" {
		t.Errorf("user_messages enum (-inbox.Steerings +schema):\n%s", diff)
	}
	if got := found[0]["default"]; got != want[0] {
		t.Errorf("user_messages default = %v, want %v", got, want[0])
	}
}
