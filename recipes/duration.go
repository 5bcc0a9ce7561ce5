package recipes

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/invopop/jsonschema"
	"go.yaml.in/yaml/v3"
)

// durationPattern is what the schema accepts as a Duration: a sequence of
// decimal numbers with units, as time.ParseDuration reads them, without sign.
const durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`

// Duration is a time.Duration written in YAML as a string such as "90s",
// "5m" or "1h30m" (time.ParseDuration syntax).
type Duration time.Duration

// UnmarshalYAML parses a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return &nodeError{node: n, msg: fmt.Sprintf("invalid duration %q: %v", n.Value, err)}
	}
	*d = Duration(v)
	return nil
}

// String formats the duration as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as its string form, such as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON parses a duration string, as in YAML.
func (d *Duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("recipes: a duration is a string such as \"90s\" or \"5m\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("recipes: invalid duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// JSONSchema describes a duration string.
func (Duration) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:     "string",
		Pattern:  durationPattern,
		Examples: []any{"30s", "5m", "1h30m"},
	}
}

// nodeError is an error found while decoding a node, with its position.
type nodeError struct {
	node *yaml.Node
	msg  string
}

func (e *nodeError) Error() string {
	return fmt.Sprintf("line %d column %d: %s", e.node.Line, e.node.Column, e.msg)
}
