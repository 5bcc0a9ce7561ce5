package recipes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func TestParseApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tool string // one entry of tools, after respond
		want ToolRef
	}{
		{"none", "http_fetch", ToolRef{Name: "http_fetch"}},
		{"mapping without approval", "{name: http_fetch, config: {timeout: 5s}}", ToolRef{Name: "http_fetch", Config: map[string]any{"timeout": "5s"}}},
		{"required", "{name: http_fetch, approval: required}", ToolRef{Name: "http_fetch", Approval: &Approval{By: ApproverOperator}}},
		{"by user with timeout", "{name: http_fetch, approval: {by: user, timeout: 1h}}", ToolRef{Name: "http_fetch", Approval: &Approval{By: ApproverUser, Timeout: Duration(time.Hour)}}},
		{"by defaults to operator", "{name: http_fetch, approval: {timeout: 90s}}", ToolRef{Name: "http_fetch", Approval: &Approval{By: ApproverOperator, Timeout: Duration(90 * time.Second)}}},
		{"empty mapping", "{name: http_fetch, approval: {}}", ToolRef{Name: "http_fetch", Approval: &Approval{By: ApproverOperator}}},
		{"with config", "{name: http_fetch, config: {timeout: 5s}, approval: {by: operator}}", ToolRef{Name: "http_fetch", Config: map[string]any{"timeout": "5s"}, Approval: &Approval{By: ApproverOperator}}},
		{"longest timeout", "{name: http_fetch, approval: {timeout: 168h}}", ToolRef{Name: "http_fetch", Approval: &Approval{By: ApproverOperator, Timeout: Duration(maxApprovalTimeout)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Parse("x.yaml", []byte(header+"tools: [respond, "+tt.tool+"]\n"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, r.Tools[1]); diff != "" {
				t.Errorf("tools[1] mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApprovalYAMLWithoutSchema decodes tool entries as the engines' test
// scenarios do, without the schema in front: the decoder refuses what the
// schema would.
func TestApprovalYAMLWithoutSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml string
		want string
	}{
		{"{name: x, approval: maybe}", "line 1 column 21: must be `required` or a mapping `{by: operator|user, timeout: 1h}` (got \"maybe\")"},
		{"{name: x, approval: [user]}", "line 1 column 21: must be `required` or a mapping `{by: operator|user, timeout: 1h}` (got a list)"},
		{"{name: x, approval: {who: user}}", "line 1 column 22: unknown field; the fields here are `by`, `timeout`"},
		{"{name: x, approval: {timeout: soon}}", "line 1 column 31: invalid duration \"soon\": write numbers with units (ns, us, ms, s, m, h), such as \"90s\", \"5m\" or \"1h30m\""},
	}
	for _, tt := range tests {
		var ref ToolRef
		err := yaml.Unmarshal([]byte(tt.yaml), &ref)
		if diff := cmp.Diff(tt.want, errString(err)); diff != "" {
			t.Errorf("Unmarshal(%s) mismatch (-want +got):\n%s", tt.yaml, diff)
		}
	}
}

func TestToolRefJSONApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ref  ToolRef
		json string
	}{
		{"required", ToolRef{Name: "github.*", Approval: &Approval{By: ApproverOperator}}, `{"name":"github.*","approval":{"by":"operator"}}`},
		{"with timeout", ToolRef{Name: "http_fetch", Approval: &Approval{By: ApproverUser, Timeout: Duration(time.Hour)}}, `{"name":"http_fetch","approval":{"by":"user","timeout":"1h0m0s"}}`},
		{"with config", ToolRef{Name: "http_fetch", Config: map[string]any{"retries": "2"}, Approval: &Approval{By: ApproverOperator}}, `{"name":"http_fetch","config":{"retries":"2"},"approval":{"by":"operator"}}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.ref)
		if err != nil {
			t.Fatalf("%s: Marshal: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.json, string(b)); diff != "" {
			t.Errorf("%s: Marshal mismatch (-want +got):\n%s", tt.name, diff)
		}
		var back ToolRef
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: Unmarshal(%s): %v", tt.name, b, err)
		}
		if diff := cmp.Diff(tt.ref, back); diff != "" {
			t.Errorf("%s: round trip mismatch (-want +got):\n%s", tt.name, diff)
		}
	}

	// by defaults to operator in JSON as in YAML.
	var ref ToolRef
	if err := json.Unmarshal([]byte(`{"name":"http_fetch","approval":{"timeout":"1h"}}`), &ref); err != nil {
		t.Fatal(err)
	}
	want := ToolRef{Name: "http_fetch", Approval: &Approval{By: ApproverOperator, Timeout: Duration(time.Hour)}}
	if diff := cmp.Diff(want, ref); diff != "" {
		t.Errorf("Unmarshal without by (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"name":"http_fetch","approval":{"timeout":"soon"}}`), &ref); err == nil {
		t.Error("Unmarshal accepted an approval timeout of \"soon\"")
	}
}

func TestApprovalFor(t *testing.T) {
	t.Parallel()
	operator := &Approval{By: ApproverOperator}
	user := &Approval{By: ApproverUser, Timeout: Duration(time.Hour)}
	r := &Recipe{Tools: []ToolRef{
		{Name: "respond"},
		{Name: "http_fetch", Approval: user},
		{Name: "github.*", Approval: operator},
		{Name: "github.search_issues"}, // set apart from the rest of github
		{Name: "jira.*"},
		{Name: "jira.delete", Approval: user},
	}}
	tests := []struct {
		tool string
		want *Approval
	}{
		{"respond", nil},
		{"http_fetch", user},
		{"github.create_issue", operator},
		{"github.search_issues", nil},
		{"github.*", operator},
		{"jira.search", nil},
		{"jira.delete", user},
		{"gitlab.create_issue", nil},
		{"github", nil},
		{"tell_user", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, r.ApprovalFor(tt.tool)); diff != "" {
			t.Errorf("ApprovalFor(%q) mismatch (-want +got):\n%s", tt.tool, diff)
		}
	}
	r.ApprovalFor("http_fetch").By = ApproverOperator
	if r.Tools[1].Approval.By != ApproverUser {
		t.Error("changing what ApprovalFor returned changed the recipe")
	}
}

// TestApprovalExtends checks that a tool's approval reaches the recipes that
// extend it, and that a child's tool list replaces it as it replaces the
// rest of the parent's list.
func TestApprovalExtends(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"parent":   "name: parent\nmodel: {provider: default}\ntools:\n  - respond\n  - name: http_fetch\n    approval: {by: user, timeout: 30m}\n",
		"inherits": "name: inherits\nextends: parent\ndescription: Keeps the parent's tools.\n",
		"replaces": "name: replaces\nextends: parent\ntools: [respond, http_fetch]\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	gated := &Approval{By: ApproverUser, Timeout: Duration(30 * time.Minute)}
	for name, want := range map[string]*Approval{"parent": gated, "inherits": gated, "replaces": nil} {
		r, err := lib.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, r.ApprovalFor("http_fetch")); diff != "" {
			t.Errorf("%s: ApprovalFor(http_fetch) mismatch (-want +got):\n%s", name, diff)
		}
	}
}
