package recipes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// EngineVogon runs a gated pipeline: the recipe's phases, one after the
// other, each ended by the model's phase_done call whose result must pass
// the phase's gate.
const EngineVogon Engine = "vogon"

// Phase is one step of a vogon recipe's pipeline: its own prompt and tools,
// and the gate its result must pass before the next phase begins.
type Phase struct {
	Name         string   `yaml:"name" json:"name" jsonschema:"required,minLength=1,maxLength=64,pattern=^[a-z0-9][a-z0-9_-]*$" jsonschema_description:"Name of the phase, unique in the recipe: lowercase letters, digits, '-' and '_'."`
	SystemPrompt string   `yaml:"system_prompt,omitempty" json:"system_prompt,omitempty" jsonschema_description:"What the model does in this phase; it follows the recipe's system_prompt, and the results of the earlier phases follow it."`
	Tools        []string `yaml:"tools,omitempty" json:"tools,omitempty" jsonschema_description:"The tools of the recipe's pool this phase may call (names as in tools); none: the phase calls only phase_done."`
	Gate         Gate     `yaml:"gate,omitempty" json:"gate,omitzero" jsonschema_description:"What the phase's result must be: the model ends the phase with phase_done {result}, which must validate against gate.schema."`
	OnFail       OnFail   `yaml:"on_fail,omitempty" json:"on_fail,omitzero" jsonschema_description:"What happens when the result keeps failing the gate (validation.max_corrections spent): 'retry' the phase from its start, 'fail' the process (the default), or {back_to: NAME} to go back to an earlier phase, whose prompt then shows its own earlier result and this phase's refusals."`
	Approval     Approver `yaml:"approval,omitempty" json:"approval,omitempty" jsonschema:"enum=operator,enum=user" jsonschema_description:"Who approves the phase's result once it passed the gate, before the next phase begins (or, for the last phase, before the answer or the task's result goes out): 'operator' or 'user' (an operator may always decide). The phase_done call waits as a gated tool call does (the process BLOCKED, waiting_for approval); a rejection is phase_done's error result, with the reason, and the phase goes on. Left out: no approval."`
}

// Gate is the check a phase's result must pass.
type Gate struct {
	Schema map[string]any `yaml:"schema,omitempty" json:"schema,omitempty" jsonschema_description:"JSON Schema (draft 2020-12) of phase_done's result; none: any result passes."`
}

// The actions of OnFail.
const (
	OnFailFail   = "fail"
	OnFailRetry  = "retry"
	OnFailBackTo = "back_to"
)

// OnFail is what a phase does when its result keeps failing the gate. In
// YAML it is `retry`, `fail` or a mapping {back_to: NAME}.
type OnFail struct {
	Action string // OnFailFail (when empty), OnFailRetry or OnFailBackTo
	BackTo string // the phase to go back to, with OnFailBackTo
}

// Do returns the action, OnFailFail when none is set.
func (o OnFail) Do() string {
	if o.Action == "" {
		return OnFailFail
	}
	return o.Action
}

// UnmarshalYAML accepts both forms.
func (o *OnFail) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*o = OnFail{Action: n.Value}
		return nil
	}
	_, v := mappingValue(n, OnFailBackTo)
	if v == nil {
		return &nodeError{node: n, msg: "must be `retry`, `fail` or {back_to: NAME}"}
	}
	*o = OnFail{Action: OnFailBackTo, BackTo: deref(v).Value}
	return nil
}

// MarshalJSON writes the YAML forms' JSON.
func (o OnFail) MarshalJSON() ([]byte, error) {
	if o.Action == OnFailBackTo {
		return json.Marshal(map[string]string{OnFailBackTo: o.BackTo})
	}
	return json.Marshal(o.Action)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *OnFail) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		return json.Unmarshal(data, &o.Action)
	}
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	to, ok := m[OnFailBackTo]
	if !ok || len(m) != 1 {
		return errors.New("recipes: on_fail is `retry`, `fail` or {back_to: NAME}")
	}
	*o = OnFail{Action: OnFailBackTo, BackTo: to}
	return nil
}

// IsZero reports an unset OnFail (for omitzero).
func (o OnFail) IsZero() bool { return o == OnFail{} }

// JSONSchema describes both forms.
func (OnFail) JSONSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set(OnFailBackTo, &jsonschema.Schema{Type: "string", MinLength: ptr(uint64(1)), Description: "An earlier phase's name."})
	return &jsonschema.Schema{
		Description: "'retry' (the phase again), 'fail' (the process fails; default) or {back_to: NAME} (an earlier phase again).",
		OneOf: []*jsonschema.Schema{
			{Type: "string", Enum: []any{OnFailRetry, OnFailFail}},
			{Type: "object", Properties: props, Required: []string{OnFailBackTo}, AdditionalProperties: jsonschema.FalseSchema},
		},
	}
}

// CompileGate compiles a gate's schema (draft 2020-12 unless it says
// otherwise), refusing references outside it; nil when there is none.
func CompileGate(schema map[string]any) (*jsv.Schema, error) {
	if schema == nil {
		return nil, nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsv.NewCompiler()
	c.DefaultDraft(jsv.Draft2020)
	c.UseLoader(gateLoader{})
	const loc = "urn:brain:gate"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// gateLoader refuses every URL a gate's schema refers to outside itself.
type gateLoader struct{}

func (gateLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("a gate's schema may refer only to itself, not to %s", u)
}

// clonePhases returns a deep copy of ps (gate schemas are copied through
// their JSON, which is all they hold).
func clonePhases(ps []Phase) []Phase {
	if ps == nil {
		return nil
	}
	out := make([]Phase, len(ps))
	for i, p := range ps {
		p.Tools = slices.Clone(p.Tools)
		if p.Gate.Schema != nil {
			raw, _ := json.Marshal(p.Gate.Schema)
			p.Gate.Schema = nil
			_ = json.Unmarshal(raw, &p.Gate.Schema)
		}
		out[i] = p
	}
	return out
}

// phases checks a vogon recipe's pipeline: only vogon recipes have phases,
// and they need at least one; names are unique, back_to names an earlier
// phase, gate schemas compile, and a phase's tools are in the pool (the
// schema holds approval to operator or user).
func (c *checker) phases() {
	vogon := c.r.EngineKind() == EngineVogon
	switch {
	case !vogon && len(c.r.Phases) > 0:
		c.at(c.find("phases"), "phases", fmt.Sprintf("only a recipe with `engine: vogon` runs phases (this one's engine is `%s`); set `engine: vogon`, or remove phases", c.r.EngineKind()))
		return
	case vogon && len(c.r.Phases) == 0:
		c.at(c.nearest("phases"), "phases", "a vogon recipe runs its phases in order; add `phases:` with at least one {name, system_prompt, gate}")
		return
	}
	seen := map[string]int{}
	for i, p := range c.r.Phases {
		at := joinIndex("phases", i)
		if j, dup := seen[p.Name]; dup {
			c.at(c.find("phases", i, "name"), at+".name", fmt.Sprintf("`%s` is already the name of phases[%d]; phase names must be unique", p.Name, j))
		} else {
			seen[p.Name] = i
		}
		if _, err := CompileGate(p.Gate.Schema); err != nil {
			c.at(c.find("phases", i, "gate", "schema"), at+".gate.schema", "is not a valid JSON Schema: "+strings.ReplaceAll(err.Error(), "\n", " "))
		}
		for k, name := range p.Tools {
			if !c.inPool(name) {
				c.at(c.find("phases", i, "tools", k), joinIndex(at+".tools", k), fmt.Sprintf("`%s` is not in the recipe's tools; a phase calls tools of the pool, add it there%s", name, didYouMean(name, c.poolNames())))
			}
		}
		switch o := p.OnFail; o.Do() {
		case OnFailFail, OnFailRetry:
		case OnFailBackTo:
			j := slices.IndexFunc(c.r.Phases[:i], func(q Phase) bool { return q.Name == o.BackTo })
			if j < 0 {
				c.at(c.find("phases", i, "on_fail", OnFailBackTo), at+".on_fail.back_to", fmt.Sprintf("`%s` is not an earlier phase; back_to names one of the phases before `%s`%s", o.BackTo, p.Name, didYouMean(o.BackTo, phaseNames(c.r.Phases[:i]))))
			}
		default:
			c.at(c.find("phases", i, "on_fail"), at+".on_fail", fmt.Sprintf("must be `retry`, `fail` or {back_to: NAME} (got %q)", o.Action))
		}
	}
}

// inPool reports whether the pool has the tool called name: an entry of
// that name, or `server.*` of its server.
func (c *checker) inPool(name string) bool {
	for _, t := range c.r.Tools {
		if t.Name == name || (strings.HasSuffix(t.Name, ".*") && strings.HasPrefix(name, strings.TrimSuffix(t.Name, "*"))) {
			return true
		}
	}
	return false
}

func (c *checker) poolNames() []string {
	names := make([]string, len(c.r.Tools))
	for i, t := range c.r.Tools {
		names[i] = t.Name
	}
	return names
}

func phaseNames(ps []Phase) []string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}
