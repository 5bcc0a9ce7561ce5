package recipes

import (
	"encoding/json"
	"time"

	"github.com/invopop/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
)

// Approval says a tool's calls wait for a person's decision before they run.
// In YAML a tool entry writes it `approval: required` (an operator decides,
// without timeout) or `approval: {by: user, timeout: 1h}`.
type Approval struct {
	// By is who decides. A decoded recipe always has it: ApproverOperator
	// when the recipe leaves it out.
	By Approver `json:"by"`
	// Timeout is how long a call waits for the decision; 0: no limit.
	Timeout Duration `json:"timeout,omitempty"`
}

// Approver is who decides on a tool call that needs approval.
type Approver string

// The people who can approve a tool call: the log's words for them.
const (
	// ApproverOperator: an operator of the server decides (the default).
	ApproverOperator Approver = conversation.ApproverOperator
	// ApproverUser: the user the process talks with decides.
	ApproverUser Approver = conversation.ApproverUser
)

// approvalRequired is the short form of {by: operator}.
const approvalRequired = "required"

// maxApprovalTimeout is the longest approval.timeout lint accepts. A pending
// approval holds its process, which does nothing else until a person
// decides or the timeout runs out; a timeout beyond a week is more likely a
// slip of units than a deadline anyone meant.
const maxApprovalTimeout = 7 * 24 * time.Hour

// approvalForms says what an approval may be, for messages.
const approvalForms = "must be `required` or a mapping `{by: operator|user, timeout: 1h}`"

// UnmarshalYAML accepts both forms of an approval. Recipe files meet the
// schema first; these errors are for recipes decoded without it, such as
// the engines' test scenarios.
func (a *Approval) UnmarshalYAML(n *yaml.Node) error {
	n = deref(n)
	switch {
	case n.Kind == yaml.ScalarNode && n.Value == approvalRequired:
		*a = Approval{By: ApproverOperator}
		return nil
	case n.Kind != yaml.MappingNode:
		return &nodeError{node: n, msg: approvalForms + " (got " + describe(n) + ")"}
	}
	out := Approval{By: ApproverOperator}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		switch k.Value {
		case "by":
			out.By = Approver(v.Value)
		case "timeout":
			if err := out.Timeout.UnmarshalYAML(v); err != nil {
				return err
			}
		default:
			return &nodeError{node: k, msg: "unknown field; the fields here are `by`, `timeout`"}
		}
	}
	*a = out
	return nil
}

// UnmarshalJSON reads the object {"by", "timeout"} that a ToolRef's JSON
// carries, with By defaulting to ApproverOperator as in YAML.
func (a *Approval) UnmarshalJSON(data []byte) error {
	type plain Approval // without this method
	out := plain{By: ApproverOperator}
	if err := json.Unmarshal(data, &out); err != nil {
		return err
	}
	*a = Approval(out)
	return nil
}

// JSONSchema describes both forms of an approval.
func (Approval) JSONSchema() *jsonschema.Schema {
	timeout := Duration(0).JSONSchema()
	timeout.Description = "How long a call waits for the decision, at most 168h (7 days); left out, no limit."
	props := jsonschema.NewProperties()
	props.Set("by", &jsonschema.Schema{
		Type:        "string",
		Enum:        []any{string(ApproverUser), string(ApproverOperator)},
		Default:     string(ApproverOperator),
		Description: "Who decides: 'operator' (an operator of the server) or 'user' (the user the process talks with).",
	})
	props.Set("timeout", timeout)
	return &jsonschema.Schema{
		Description: "The tool's calls wait for a person's decision before they run: 'required' (an operator decides) or {by, timeout}. Not allowed on respond, finish_task and tell_user.",
		OneOf: []*jsonschema.Schema{
			{Type: "string", Const: approvalRequired},
			{Type: "object", Properties: props, AdditionalProperties: jsonschema.FalseSchema},
		},
	}
}

// ApprovalFor returns the approval that calls of tool wait for, or nil when
// they run without one. tool is named as in the pool: a built-in name or
// "server.tool", which a "server.*" entry covers too; an entry naming the
// tool exactly wins over the wildcard, so that one tool of a server can be
// set apart from the rest. The result is a copy.
func (r *Recipe) ApprovalFor(tool string) *Approval {
	var wildcard string
	if server, _, ok := tools.SplitMCP(tool); ok {
		wildcard = server + tools.MCPSeparator + "*"
	}
	var found *Approval
	for _, t := range r.Tools {
		if t.Name == tool {
			return clonePtr(t.Approval)
		}
		if wildcard != "" && t.Name == wildcard {
			found = t.Approval
		}
	}
	return clonePtr(found)
}
