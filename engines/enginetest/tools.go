package enginetest

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
)

// Tools of the test scenarios, beside the built-ins.
var (
	// Lookup returns `size` characters of data about `query`.
	Lookup = tools.Func{
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
	// Report answers with blocks addressed to the user only, as an MCP
	// server may.
	Report = tools.Func{
		Def: tools.Definition{Name: "report", Description: "Shows a report to the user.", Schema: json.RawMessage(`{"type":"object"}`)},
		Fn: func(context.Context, json.RawMessage) (tools.Result, error) {
			return tools.Result{Content: []conversation.Block{
				conversation.MarkdownBlock("| region | sales |\n|---|---|\n| north | 12 |").For(conversation.RoleUser),
			}}, nil
		},
	}
	// Boom panics.
	Boom = tools.Func{
		Def: tools.Definition{Name: "boom", Description: "Always panics.", Schema: json.RawMessage(`{"type":"object"}`)},
		Fn:  func(context.Context, json.RawMessage) (tools.Result, error) { panic("boom") },
	}
)

// Catalog is the built-in tools' catalog with Lookup, Report and Boom.
func Catalog() tools.Catalog {
	catalog := tools.BuiltinCatalog()
	for _, tool := range []tools.Tool{Lookup, Report, Boom} {
		catalog[tool.Definition().Name] = func(map[string]any) (tools.Tool, error) { return tool, nil }
	}
	return catalog
}
