package toolset

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/google/go-cmp/cmp"
)

// TestBuildPresentationLinks checks that present_results gets the
// recipe's presentation.links, unless its entry has a config of its own.
func TestBuildPresentationLinks(t *testing.T) {
	t.Parallel()
	links := map[string]string{"media": "/app/media?filter={filter}"}
	tests := []struct {
		name string
		ref  recipes.ToolRef
		want string
	}{
		{"recipe links", recipes.ToolRef{Name: tools.PresentResults}, "media ({filter})"},
		{"own config", recipes.ToolRef{Name: tools.PresentResults, Config: map[string]any{
			"links": map[string]any{"record": "/app/media/{id}"},
		}}, "record ({id})"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &recipes.Recipe{Tools: []recipes.ToolRef{tt.ref}, Presentation: recipes.Presentation{Links: links}}
			reg, err := Build(tools.BuiltinCatalog(), r)
			if err != nil {
				t.Fatal(err)
			}
			if d := reg.Definitions()[0].Description; !strings.HasSuffix(d, "Link templates you may name, with their placeholders: "+tt.want+".") {
				t.Errorf("description does not end with the templates %s:\n%s", tt.want, d)
			}
		})
	}

	r := &recipes.Recipe{Tools: []recipes.ToolRef{{Name: tools.PresentResults}}, Presentation: recipes.Presentation{Links: map[string]string{"away": "//evil.example/{x}"}}}
	if _, err := Build(tools.BuiltinCatalog(), r); err == nil || !strings.Contains(err.Error(), "links.away") {
		t.Errorf("Build with a template leaving the site: %v", err)
	}
}

// Builtins, with the three tools a node adds, is every built-in tool.
func TestBuiltins(t *testing.T) {
	t.Parallel()
	names := slices.Collect(maps.Keys(Builtins()))
	names = append(names, tools.SpawnWorker, tools.ScheduleWakeup, tools.CancelWakeup)
	slices.Sort(names)
	if diff := cmp.Diff(tools.BuiltinNames(), names); diff != "" {
		t.Errorf("built-in tools (-want +got):\n%s", diff)
	}
	if _, err := Builtins().Build([]tools.Ref{{Name: tools.HTTPFetch}}); err != nil {
		t.Errorf("http_fetch from Builtins: %v", err)
	}
}

// TestBuildApproval checks that a built-in's approval in the pool reaches
// the registry, and that the others need none.
func TestBuildApproval(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Tools: []recipes.ToolRef{
		{Name: tools.Respond},
		{Name: tools.PresentResults, Approval: &recipes.Approval{By: recipes.ApproverOperator}},
	}}
	reg, err := Build(tools.BuiltinCatalog(), r)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := reg.Approval(tools.PresentResults); !ok || a != (tools.Approval{By: "operator"}) {
		t.Errorf("present_results' approval = %+v, %v; want {operator}", a, ok)
	}
	if _, ok := reg.Approval(tools.Respond); ok {
		t.Error("respond needs approval; want none")
	}
}
