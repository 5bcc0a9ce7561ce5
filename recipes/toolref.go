package recipes

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/invopop/jsonschema"
	"go.yaml.in/yaml/v3"
)

// ToolRef is one entry of a recipe's tool pool. In YAML it is either a plain
// tool name or a mapping {name, config, approval}:
//
//	tools:
//	  - respond
//	  - github.*
//	  - name: http_fetch
//	    config: {timeout: 10s}
//	    approval: {by: operator, timeout: 1h}
//
// Name is a built-in tool, "server.tool" or "server.*" for tools of an MCP
// server of the recipe. Config is handed to the tool as it is. Approval,
// when set, makes the tool's calls wait for a person's decision.
type ToolRef struct {
	Name     string
	Config   map[string]any
	Approval *Approval
}

// UnmarshalYAML accepts both forms of a tool reference.
func (t *ToolRef) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*t = ToolRef{Name: n.Value}
		return nil
	}
	var ref ToolRef
	if _, name := mappingValue(n, "name"); name != nil {
		ref.Name = deref(name).Value
	}
	if _, config := mappingValue(n, "config"); config != nil {
		// The generic value has string keys at every level, as JSON has,
		// where yaml.v3 would make map[any]any of a mapping with other keys.
		v, errs := toValue("", config)
		if len(errs) > 0 {
			return &nodeError{node: config, msg: errs[0].Message}
		}
		m, ok := v.(map[string]any)
		if !ok && v != nil {
			return &nodeError{node: config, msg: "must be a mapping"}
		}
		ref.Config = m
	}
	if _, approval := mappingValue(n, "approval"); approval != nil {
		ref.Approval = new(Approval)
		if err := approval.Decode(ref.Approval); err != nil {
			return err
		}
	}
	*t = ref
	return nil
}

// MarshalJSON writes a reference with neither config nor approval as a
// plain string, as the YAML short form, and any other as
// {"name", "config", "approval"}.
func (t ToolRef) MarshalJSON() ([]byte, error) {
	if len(t.Config) == 0 && t.Approval == nil {
		return json.Marshal(t.Name)
	}
	return json.Marshal(toolRefObject(t))
}

// UnmarshalJSON accepts both forms MarshalJSON writes.
func (t *ToolRef) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var name string
		if err := json.Unmarshal(data, &name); err != nil {
			return err
		}
		*t = ToolRef{Name: name}
		return nil
	}
	if len(data) == 0 || data[0] != '{' {
		return errors.New("recipes: a tool reference is a name or an object {name, config, approval}")
	}
	var obj toolRefObject
	if err := json.Unmarshal(data, &obj); err != nil {
		return err
	}
	*t = ToolRef(obj)
	return nil
}

// toolRefObject is the JSON object form of a ToolRef.
type toolRefObject struct {
	Name     string         `json:"name"`
	Config   map[string]any `json:"config,omitempty"`
	Approval *Approval      `json:"approval,omitempty"`
}

// JSONSchema describes both forms of a tool reference.
func (ToolRef) JSONSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("name", &jsonschema.Schema{
		Type:        "string",
		MinLength:   ptr(uint64(1)),
		Description: "The tool's name, as in the plain form.",
	})
	props.Set("config", &jsonschema.Schema{
		Type:        "object",
		Description: "Settings handed to the tool as they are.",
	})
	props.Set("approval", Approval{}.JSONSchema())
	return &jsonschema.Schema{
		Description: "A tool name: built-in, 'server.tool' or 'server.*' for an MCP server of this recipe; or a mapping {name, config, approval}.",
		OneOf: []*jsonschema.Schema{
			{Type: "string", MinLength: ptr(uint64(1))},
			{
				Type:                 "object",
				Properties:           props,
				Required:             []string{"name"},
				AdditionalProperties: jsonschema.FalseSchema,
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }
