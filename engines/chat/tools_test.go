package chat

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

// Tools of the test scenarios, beside the built-ins.
var (
	// lookup returns `size` characters of data about `query`.
	lookupTool = tools.Func{
		Def: tools.Definition{
			Name:        "lookup",
			Description: "Looks data up.",
			Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"size":{"type":"integer","minimum":1}},` +
				`"required":["query"],"additionalProperties":false}`),
		},
		Fn: func(_ context.Context, args json.RawMessage) (tools.Result, error) {
			var a struct {
				Query string `json:"query"`
				Size  int    `json:"size"`
			}
			if err := json.Unmarshal(args, &a); err != nil {
				return tools.Result{}, err
			}
			text := "data about " + a.Query
			if a.Size > len(text) {
				text += strings.Repeat(".", a.Size-len(text))
			}
			return tools.TextResult(text), nil
		},
	}
	// report answers with blocks addressed to the user only, as an MCP
	// server may.
	reportTool = tools.Func{
		Def: tools.Definition{Name: "report", Description: "Shows a report to the user.", Schema: json.RawMessage(`{"type":"object"}`)},
		Fn: func(context.Context, json.RawMessage) (tools.Result, error) {
			return tools.Result{Content: []conversation.Block{
				conversation.MarkdownBlock("| region | sales |\n|---|---|\n| north | 12 |").For(conversation.RoleUser),
			}}, nil
		},
	}
	// boom panics.
	boomTool = tools.Func{
		Def: tools.Definition{Name: "boom", Description: "Always panics.", Schema: json.RawMessage(`{"type":"object"}`)},
		Fn:  func(context.Context, json.RawMessage) (tools.Result, error) { panic("boom") },
	}
)

// testRegistry builds the tool pool a recipe names from the built-ins and
// the test tools.
func testRegistry(t testing.TB, r *recipes.Recipe) *tools.Registry {
	t.Helper()
	catalog := tools.BuiltinCatalog()
	for _, tool := range []tools.Tool{lookupTool, reportTool, boomTool} {
		catalog[tool.Definition().Name] = func(map[string]any) (tools.Tool, error) { return tool, nil }
	}
	reg, err := toolset.Build(catalog, r)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
