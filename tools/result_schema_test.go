package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ticketsSchema is a result schema as a recipe's YAML decodes it.
func ticketsSchema() map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []any{"count", "ids"},
		"properties": map[string]any{
			"count": map[string]any{"type": "integer", "minimum": 0},
			"ids":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
		"additionalProperties": false,
	}
}

func TestResultSchemaCheck(t *testing.T) {
	t.Parallel()
	s, err := CompileResultSchema(ticketsSchema())
	if err != nil {
		t.Fatal(err)
	}
	const schema = `{"additionalProperties":false,"properties":{"count":{"minimum":0,"type":"integer"},"ids":{"items":{"type":"string"},"type":"array"}},"required":["count","ids"],"type":"object"}`
	fix := "Fix it and call finish_task again, alone, with \"result\" set to the corrected JSON text (JSON only, no other words), " +
		"matching this JSON Schema: " + schema + ". If the task cannot be carried out, call finish_task with status \"failed\" and say why in result."
	tests := []struct {
		name, result, want, wantErr string
	}{
		{"valid", `{"count": 2, "ids": ["#1", "#2"]}`, `{"count":2,"ids":["#1","#2"]}`, ""},
		{"in a code fence", "```json\n{\"count\": 0, \"ids\": []}\n```", `{"count":0,"ids":[]}`, ""},
		{"each problem with its path", `{"count": "3", "ids": [1], "extra": true}`, "",
			"finish_task refused: the result does not match the result schema:\n" +
				"- /count: got string, want integer\n- /extra: unknown property, remove it\n- /ids/0: got number, want string\n" + fix},
		{"missing property", `{"count": -1}`, "",
			"finish_task refused: the result does not match the result schema:\n- /count: is -1, want at least 0\n- /ids: missing required property\n" + fix},
		{"not JSON", "There are 3 tickets.", "",
			"finish_task refused: the result is not JSON (invalid character 'T' looking for beginning of value). " + fix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.Check(tt.result)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Check(%q) = %s, want an error", tt.result, got)
				}
				if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
					t.Errorf("Check error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("Check(%q) = %s, %v; want %s", tt.result, got, err, tt.want)
			}
		})
	}
}

func TestCompileResultSchemaErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  map[string]any
		want string
	}{
		{"bad type", map[string]any{"type": "integr"},
			`not a valid JSON Schema: /type: matches none of the allowed forms: must be one of "array", "boolean", "integer", "null", "number", "object", "string" | got string, want array`},
		{"outside reference", map[string]any{"$ref": "https://example.com/s.json"}, "does not compile:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := CompileResultSchema(tt.doc)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("CompileResultSchema error = %v, want it to begin %q", err, tt.want)
			}
		})
	}
}

// TestFinishTaskShowsResultSchema: a finish_task given a result schema
// shows it to the model in the description of "result", and still takes
// the arguments every worker sends.
func TestFinishTaskShowsResultSchema(t *testing.T) {
	t.Parallel()
	tool, err := BuiltinCatalog()[FinishTask](map[string]any{FinishResultSchemaConfig: ticketsSchema()})
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Properties struct {
			Result struct {
				Type        string `json:"type"`
				Description string `json:"description"`
			} `json:"result"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.Definition().Schema, &def); err != nil {
		t.Fatal(err)
	}
	if r := def.Properties.Result; r.Type != "string" || !strings.HasPrefix(r.Description, FinishResultSchemaDescription+`{"additionalProperties":false`) {
		t.Errorf("result = %+v, want a string described with the schema", r)
	}
	if _, err := tool.Call(context.Background(), json.RawMessage(`{"result":"{\"count\":0,\"ids\":[]}"}`)); err != nil {
		t.Errorf("Call: %v", err)
	}
	if _, err := BuiltinCatalog()[FinishTask](map[string]any{FinishResultSchemaConfig: map[string]any{"type": 3}}); err == nil ||
		!strings.Contains(err.Error(), "finish_task: result_schema is not a valid JSON Schema") {
		t.Errorf("a bad schema: err = %v", err)
	}
}
