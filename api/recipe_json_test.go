package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/recipes"
)

// The JSON of a recipe (GET /v1/recipes/{name}) uses the names of its YAML:
// every field of every recipe type has the same JSON name as YAML name, and
// is left out when empty exactly when YAML leaves it out.
func TestRecipeJSONNamesAreYAMLNames(t *testing.T) {
	t.Parallel()
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ.PkgPath() != reflect.TypeFor[recipes.Recipe]().PkgPath() || seen[typ] {
			return
		}
		seen[typ] = true
		if typ == reflect.TypeFor[recipes.ToolRef]() {
			return // marshals itself: a name, or {name, config}
		}
		for f := range typ.Fields() {
			y, j := f.Tag.Get("yaml"), f.Tag.Get("json")
			yName, yOpts, _ := strings.Cut(y, ",")
			jName, jOpts, _ := strings.Cut(j, ",")
			if jName != yName {
				t.Errorf("%s.%s: json name %q, yaml name %q", typ.Name(), f.Name, jName, yName)
			}
			yOmit := strings.Contains(yOpts, "omitempty")
			jOmit := strings.Contains(jOpts, "omitempty") || strings.Contains(jOpts, "omitzero")
			if yOmit != jOmit {
				t.Errorf("%s.%s: yaml %q, json %q: omitted when empty in one only", typ.Name(), f.Name, y, j)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[recipes.Recipe]())
	if len(seen) < 10 {
		t.Errorf("walked %d recipe types; the walk is broken", len(seen))
	}
}

func TestToolRefJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ref  recipes.ToolRef
		json string
	}{
		{recipes.ToolRef{Name: "respond"}, `"respond"`},
		{recipes.ToolRef{Name: "github.*", Config: map[string]any{}}, `"github.*"`},
		{recipes.ToolRef{Name: "http_fetch", Config: map[string]any{"timeout": "10s", "hosts": []any{"a"}}}, `{"name":"http_fetch","config":{"hosts":["a"],"timeout":"10s"}}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.ref)
		if err != nil || string(b) != tt.json {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.ref, b, err, tt.json)
		}
		var back recipes.ToolRef
		if err := json.Unmarshal([]byte(tt.json), &back); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.json, err)
		}
		want := tt.ref
		if len(want.Config) == 0 {
			want.Config = nil
		}
		if diff := cmp.Diff(want, back); diff != "" {
			t.Errorf("Unmarshal(%s) (-want +got):\n%s", tt.json, diff)
		}
	}
	var ref recipes.ToolRef
	for _, bad := range []string{`3`, `["respond"]`, `{"name": 3}`} {
		if err := json.Unmarshal([]byte(bad), &ref); err == nil {
			t.Errorf("Unmarshal(%s): no error", bad)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(recipes.Limits{TurnTimeout: recipes.Duration(90 * time.Second)})
	if err != nil || string(b) != `{"turn_timeout":"1m30s"}` {
		t.Errorf("Marshal = %s, %v; want {\"turn_timeout\":\"1m30s\"}", b, err)
	}
	if b, _ := json.Marshal(recipes.Limits{}); string(b) != `{}` {
		t.Errorf("Marshal of no limits = %s, want {}", b)
	}
	var l recipes.Limits
	if err := json.Unmarshal([]byte(`{"turn_timeout": "5m"}`), &l); err != nil || l.Timeout() != 5*time.Minute {
		t.Errorf("Unmarshal 5m = %v, %v", l.Timeout(), err)
	}
	for _, bad := range []string{`{"turn_timeout": "soon"}`, `{"turn_timeout": 300}`} {
		if err := json.Unmarshal([]byte(bad), &l); err == nil {
			t.Errorf("Unmarshal(%s): no error", bad)
		}
	}
}

// A recipe with every kind of field survives JSON: what the client decodes
// is what the server holds.
func TestRecipeJSONRoundTrip(t *testing.T) {
	t.Parallel()
	r, err := recipes.Parse("full.yaml", []byte(`
name: full
extends: default
description: Everything.
model: {provider: default, name: m, temperature: 0.5, max_tokens: 100, hosted_tools: [web_search]}
tools:
  - respond
  - name: http_fetch
    config: {timeout: 10s, retries: 2}
  - github.*
mcp_servers:
  - {name: github, command: gh-mcp, args: [serve], env: {LEVEL: debug}}
validation:
  enabled: true
  max_corrections: 0
  data_relay: {min_tool_result_chars: 10, max_reply_chars: 0}
wakeup:
  schedules: [{cron: "@daily", message: wake up}]
limits: {max_rounds: 5, turn_timeout: 90s, max_depth: 2, max_workers: 0}
presentation:
  links: {issue: "https://example.com/{id}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"turn_timeout":"1m30s"`, `"tools":["respond",{"name":"http_fetch","config":`, `"max_corrections":0`, `"system_prompt":`} {
		if !strings.Contains(string(b), part) {
			t.Errorf("JSON lacks %s:\n%s", part, b)
		}
	}
	var back recipes.Recipe
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	// A tool's config is untyped: its numbers decode from JSON as float64
	// where YAML gave int. Compare configs by their JSON.
	asJSON := cmp.Transformer("json", func(m map[string]any) string {
		b, _ := json.Marshal(m)
		return string(b)
	})
	if diff := cmp.Diff(r, &back, asJSON); diff != "" {
		t.Errorf("round trip (-yaml +json):\n%s", diff)
	}
}
