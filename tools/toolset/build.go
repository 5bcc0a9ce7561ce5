package toolset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/httpfetch"
	"github.com/engine-brain/brain/tools/mcp"
)

// Build builds the tool registry of recipe r's tool pool from catalog,
// without MCP servers: a pool naming a tool of one fails to build (see
// [Builder] for registries with them). present_results gets the
// recipe's presentation.links as its config ({links: {name: template}}),
// unless its entry in the pool has a config of its own.
func Build(catalog tools.Catalog, r *recipes.Recipe) (*tools.Registry, error) {
	reg, _, err := Builder{Catalog: catalog}.Build(context.Background(), r)
	return reg, err
}

// Builder builds the tool registries of recipes: the pool's built-ins
// from Catalog, its `server.tool` and `server.*` entries from the recipe's
// MCP servers through MCP. The model calls an MCP tool `server__tool`
// ([mcp.ModelName]).
type Builder struct {
	Catalog tools.Catalog
	// MCP reaches the recipes' MCP servers; nil builds registries without
	// them, and a pool naming an MCP tool then fails to build.
	MCP *mcp.Pool
	// Logger receives the MCP servers that could not be reached; nil logs
	// nothing.
	Logger *zap.Logger
}

// Build builds the registry of recipe r's tool pool (see [Build]),
// connecting to its MCP servers if need be.
//
// An MCP server that cannot be reached does not fail the build: its tools
// named one by one get placeholders whose calls try it again, `server.*`
// gets none of its tools, a warning is logged, and complete is false: the
// caller should build the registry again for a later turn rather than keep
// it. Any other problem (an unknown tool, names that collide or are too
// long for the model, a schema brain cannot use) is an error.
func (b Builder) Build(ctx context.Context, r *recipes.Recipe) (reg *tools.Registry, complete bool, err error) {
	catalog, cloned := b.Catalog, false
	refs := make([]tools.Ref, 0, len(r.Tools))
	seen := make(map[string]string) // model name -> the pool entry that gave it
	complete = true
	var errs []error
	claim := func(i int, name, from string) bool {
		if prev, dup := seen[name]; dup {
			errs = append(errs, &tools.RefError{Index: i, Name: from, Err: fmt.Errorf(
				"tool `%s` would be called %q by the model, as `%s` is already; remove one or rename the MCP server", from, name, prev)})
			return false
		}
		seen[name] = from
		return true
	}
	for i, ref := range r.Tools {
		server, tool, ok := tools.SplitMCP(ref.Name)
		decl, declared := mcpServer(r, server)
		if !ok || !declared {
			if claim(i, ref.Name, ref.Name) {
				refs = append(refs, builtinRef(r, ref))
			}
			continue
		}
		ts, err := b.mcpTools(ctx, decl, tool, ref)
		if errors.Is(err, mcp.ErrUnavailable) {
			complete = false
			b.log().Warn("MCP server unavailable: its tools are left out or replaced by placeholders",
				zap.String("recipe", r.Name), zap.String("tool", ref.Name), zap.Error(err))
		} else if err != nil {
			errs = append(errs, &tools.RefError{Index: i, Name: ref.Name, Err: fmt.Errorf("tool %q: %w", ref.Name, err)})
			continue
		}
		for _, t := range ts {
			name := t.Definition().Name
			if !claim(i, name, ref.Name) {
				continue
			}
			if !cloned { // b.Catalog is the caller's
				catalog, cloned = make(tools.Catalog, len(b.Catalog)+len(ts)), true
				maps.Copy(catalog, b.Catalog)
			}
			catalog[name] = func(map[string]any) (tools.Tool, error) { return t, nil }
			refs = append(refs, tools.Ref{Name: name, Approval: approval(ref.Approval)}) // a tool comes from one entry
		}
	}
	if len(errs) > 0 {
		return nil, false, errors.Join(errs...)
	}
	reg, err = catalog.Build(refs)
	if err != nil {
		return nil, false, err
	}
	return reg, complete, nil
}

// mcpTools returns the tools that the pool entry ref (tool being its part
// after the server's name) names on server s.
func (b Builder) mcpTools(ctx context.Context, s recipes.MCPServer, tool string, ref recipes.ToolRef) ([]tools.Tool, error) {
	switch {
	case len(ref.Config) > 0:
		return nil, errors.New("a tool of an MCP server takes no config")
	case b.MCP == nil:
		return nil, fmt.Errorf("MCP server `%s` is not connected here, only built-in tools are", s.Name)
	}
	return b.MCP.Tools(ctx, mcp.Server{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL}, []string{tool})
}

func (b Builder) log() *zap.Logger {
	if b.Logger == nil {
		return zap.NewNop()
	}
	return b.Logger
}

// mcpServer returns the MCP server called name that r declares.
func mcpServer(r *recipes.Recipe, name string) (recipes.MCPServer, bool) {
	for _, s := range r.MCPServers {
		if s.Name == name {
			return s, true
		}
	}
	return recipes.MCPServer{}, false
}

// builtinRef returns the catalog reference of a pool entry that is no MCP
// tool: present_results gets the recipe's links, finish_task its result
// schema.
func builtinRef(r *recipes.Recipe, ref recipes.ToolRef) tools.Ref {
	out := tools.Ref{Name: ref.Name, Config: ref.Config, Approval: approval(ref.Approval)}
	if ref.Name == tools.PresentResults && len(ref.Config) == 0 && len(r.Presentation.Links) > 0 {
		out.Config = map[string]any{"links": maps.Clone(r.Presentation.Links)}
	}
	if ref.Name == tools.FinishTask && len(ref.Config) == 0 && r.ResultSchema != nil {
		out.Config = map[string]any{tools.FinishResultSchemaConfig: r.ResultSchema}
	}
	return out
}

// Builtins is the catalog of every built-in tool that needs no runtime:
// tools.BuiltinCatalog's and http_fetch (package httpfetch, kept out of
// tools so that what imports tools pulls no HTTP client). A node adds the
// ones that act through it (spawn_worker, schedule_wakeup, cancel_wakeup).
func Builtins() tools.Catalog {
	c := tools.BuiltinCatalog()
	c[tools.HTTPFetch] = httpfetch.Factory(nil)
	return c
}

// approval is the registry's form of a recipe's approval, nil for none.
func approval(a *recipes.Approval) *tools.Approval {
	if a == nil {
		return nil
	}
	return &tools.Approval{By: string(a.By), Timeout: time.Duration(a.Timeout)}
}
