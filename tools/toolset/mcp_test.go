package toolset_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/mcp"
	"github.com/engine-brain/brain/tools/mcp/mcptest"
	"github.com/engine-brain/brain/tools/toolset"
)

// TestMain runs the test binary as the MCP test server when asked to.
func TestMain(m *testing.M) {
	mcptest.Main()
	os.Exit(m.Run())
}

// mcpRecipe parses a recipe whose pool names tools of the MCP test server
// srv and of a server gone, whose command does not exist.
func mcpRecipe(t *testing.T) *recipes.Recipe {
	t.Helper()
	return mcpRecipeWith(t, "[respond, srv.echo, srv.show, gone.search, gone.*]")
}

// mcpRecipeWith is mcpRecipe with the tool list pool (YAML).
func mcpRecipeWith(t *testing.T, pool string) *recipes.Recipe {
	t.Helper()
	srv := mcptest.Server("srv", mcptest.Tools)
	yaml := fmt.Sprintf(`name: mcp
model: {provider: default}
tools: %s
mcp_servers:
  - name: srv
    command: %q
    args: %q
    env: {BRAIN_MCPTEST_MODE: %q}
  - name: gone
    command: %q
`, pool, srv.Command, srv.Args, srv.Env["BRAIN_MCPTEST_MODE"], t.TempDir()+"/no-such-server")
	r, err := recipes.Parse("mcp.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A recipe's MCP tools join its registry under the names the model calls,
// answer through the engine with their audiences kept, and a server that
// cannot start leaves the other tools working.
func TestMCPToolsEndToEnd(t *testing.T) {
	t.Parallel()
	pool, err := mcp.NewPool(mcp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	r := mcpRecipe(t)

	reg, complete, err := toolset.Builder{Catalog: tools.BuiltinCatalog(), MCP: pool}.Build(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if complete {
		t.Error("Build reported complete with server gone down; want incomplete")
	}
	if diff := cmp.Diff([]string{"respond", "srv__echo", "srv__show", "gone__search"}, reg.Names()); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}

	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{
			{Name: "srv__echo", Args: map[string]any{"text": "hi"}},
			{Name: "srv__show"},
			{Name: "gone__search", Args: map[string]any{"q": "x"}},
		}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "done"}}}},
	}}}}
	clock := engines.StepClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sess := engines.NewSession(&chat.Engine{Clock: clock}, engines.Turn{Recipe: r, Model: scripted.New(script), Tools: reg}, clock)
	if _, err := sess.Say(t.Context(), "user", "go"); err != nil {
		t.Fatal(err)
	}

	results := map[string]*conversation.ToolCallResponse{}
	for _, e := range sess.Log {
		if c := e.ToolCallResponse; c != nil {
			results[c.Name] = c
		}
	}
	if c := results["srv__echo"]; c == nil || c.IsError || conversation.TextOf(c.Content) != "echo: hi" {
		t.Errorf("srv__echo's result = %+v; want echo: hi", c)
	}
	if c := results["gone__search"]; c == nil || !c.IsError || !strings.Contains(conversation.TextOf(c.Content), `MCP server "gone" could not be started`) {
		t.Errorf("gone__search's result = %+v; want an error naming the server", c)
	}
	if c := results["respond"]; c == nil || c.IsError {
		t.Errorf("respond's result = %+v; want it to work beside a dead server", c)
	}
	// The user sees what is addressed to everyone or to the user: not
	// show's summary for the model, nor the error result.
	var seen []string
	for _, e := range conversation.UserView(sess.Log) {
		if c := e.ToolCallResponse; c != nil && c.Name != "respond" {
			seen = append(seen, c.Name+": "+conversation.TextOf(c.Content))
		}
	}
	want := []string{"srv__echo: echo: hi", "srv__show: report for the user\nthe report"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("tool results in the user view (-want +got):\n%s", diff)
	}
	if reg.Replayable([]conversation.ToolCall{{Name: "srv__echo"}}) {
		t.Error("an MCP tool is replayable; want not (its calls may have effects)")
	}
}

func TestBuildMCPErrors(t *testing.T) {
	t.Parallel()
	r := mcpRecipe(t)
	// Without a pool, the MCP tools cannot be built.
	if _, err := toolset.Build(tools.BuiltinCatalog(), r); err == nil || !strings.Contains(err.Error(), "MCP server `srv` is not connected here") {
		t.Errorf("Build without MCP = %v; want an error naming the server", err)
	}

	pool, err := mcp.NewPool(mcp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	b := toolset.Builder{Catalog: tools.BuiltinCatalog(), MCP: pool}
	for _, tc := range []struct {
		name  string
		tools []recipes.ToolRef
		want  string
	}{
		{"overlap", []recipes.ToolRef{{Name: "srv.*"}, {Name: "srv.echo"}}, "tool `srv.echo` would be called \"srv__echo\" by the model, as `srv.*` is already"},
		{"unknown", []recipes.ToolRef{{Name: "srv.serch"}}, `MCP server "srv" has no tool "serch"`},
		{"config", []recipes.ToolRef{{Name: "srv.echo", Config: map[string]any{"x": 1}}}, "takes no config"},
	} {
		rr := r.Clone()
		rr.Tools = tc.tools
		_, _, err := b.Build(t.Context(), rr)
		var re *tools.RefError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &re) {
			t.Errorf("%s: Build = %v; want a RefError saying %q", tc.name, err, tc.want)
		}
	}
}

// An MCP tool's pool entry's approval reaches the registry under the name
// the model calls it, a wildcard entry's for each of its tools.
func TestMCPApproval(t *testing.T) {
	t.Parallel()
	pool, err := mcp.NewPool(mcp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	r := mcpRecipeWith(t, "[respond, {name: srv.*, approval: {by: user, timeout: 1h}}]")
	reg, _, err := toolset.Builder{Catalog: tools.BuiltinCatalog(), MCP: pool}.Build(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"srv__echo", "srv__show"} {
		if a, ok := reg.Approval(name); !ok || a != (tools.Approval{By: "user", Timeout: time.Hour}) {
			t.Errorf("%s's approval = %+v, %v; want the recipe's {user, 1h}", name, a, ok)
		}
	}
	if a, ok := reg.Approval("respond"); ok {
		t.Errorf("respond's approval = %+v; want none", a)
	}
}
