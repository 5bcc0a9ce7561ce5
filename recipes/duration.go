package recipes

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/invopop/jsonschema"
	"go.yaml.in/yaml/v3"
)

// durationPattern is what the schema accepts as a Duration: a sequence of
// decimal numbers with units, as time.ParseDuration reads them, without sign.
const durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`

// durationSyntax matches durationPattern: a duration written right, which
// time.ParseDuration refuses only when it is too long.
var durationSyntax = regexp.MustCompile(durationPattern)

// parseDuration reads s as a duration, saying how to write one when it
// cannot.
func parseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	switch {
	case err == nil:
		return v, nil
	case durationSyntax.MatchString(s):
		return 0, fmt.Errorf("duration %q is too long: the longest is %s, about 292 years", s, time.Duration(math.MaxInt64))
	default:
		return 0, fmt.Errorf("invalid duration %q: write numbers with units (ns, us, ms, s, m, h), such as \"90s\", \"5m\" or \"1h30m\"", s)
	}
}

// Duration is a time.Duration written in YAML as a string such as "90s",
// "5m" or "1h30m" (time.ParseDuration syntax).
type Duration time.Duration

// UnmarshalYAML parses a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseDuration(n.Value)
	if err != nil {
		return &nodeError{node: n, msg: err.Error()}
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
	v, err := parseDuration(s)
	if err != nil {
		return fmt.Errorf("recipes: %w", err)
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
