package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/tools"
)

// tool is one tool of a server, as the model calls it.
type tool struct {
	conn *conn
	name string // on the server
	def  tools.Definition
}

var _ tools.Tool = (*tool)(nil)

func (t *tool) Definition() tools.Definition { return t.def }

// Call calls the tool on its server. Every failure of the server becomes an
// error result for the model; only the turn's own end is returned as an
// error.
func (t *tool) Call(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	return t.conn.call(ctx, t.name, t.def.Name, args)
}

// emptySchema is the input schema of a tool that takes no arguments, and
// of a placeholder, whose arguments the server checks.
const emptySchema = `{"type":"object"}`

// newListed makes the tool of a server's listing, or says why it cannot be
// used.
func (c *conn) newListed(t *sdk.Tool) listed {
	l := listed{name: t.Name}
	name, err := ModelName(c.server.Name, t.Name)
	if err != nil {
		l.err = err
		return l
	}
	schema, err := inputSchema(t.InputSchema)
	if err == nil {
		// The registry checks it again; checked here, the error names the
		// server's tool for the recipe's author.
		err = tools.CheckSchema(schema)
	}
	if err != nil {
		l.err = fmt.Errorf("tool %q of MCP server %q has an input schema brain cannot use: %w", t.Name, c.server.Name, err)
		return l
	}
	l.tool = &tool{conn: c, name: t.Name, def: tools.Definition{Name: name, Description: t.Description, Schema: schema}}
	return l
}

// inputSchema returns a listed tool's input schema as JSON; a missing or
// empty one takes no arguments.
func inputSchema(s any) (json.RawMessage, error) {
	if s == nil {
		return json.RawMessage(emptySchema), nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	if string(b) == "{}" || string(b) == "null" {
		return json.RawMessage(emptySchema), nil
	}
	return b, nil
}

// placeholder returns the tool called name on the server, which could not
// be reached (why) to learn what it is: its calls try again.
func (c *conn) placeholder(name string, why error) (tools.Tool, error) {
	model, err := ModelName(c.server.Name, name)
	if err != nil {
		return nil, err
	}
	return &tool{conn: c, name: name, def: tools.Definition{
		Name: model,
		Description: fmt.Sprintf("Tool %s of the MCP server %s, which could not be reached when the tools were loaded (%s). "+
			"Calling it tries the server again; its arguments are checked by the server.", name, c.server.Name, oneLine(why.Error())),
		Schema: json.RawMessage(emptySchema),
	}}, nil
}

// call calls tool name on the server for the model, which called it as.
func (c *conn) call(ctx context.Context, name, as string, args json.RawMessage) (tools.Result, error) {
	s, _, err := c.connect(ctx, true)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return tools.Result{}, ctx.Err()
	case errors.Is(err, ErrClosed):
		return tools.ErrorResult("%s was not called: the connection to MCP server %q is closed (brain is stopping).", as, c.server.Name), nil
	default:
		return tools.ErrorResult("%s was not called: %v. Try again later, or do without it.", as, err), nil
	}
	cctx, cancel := context.WithTimeout(ctx, c.pool.cfg.CallTimeout)
	defer cancel()
	res, err := s.CallTool(cctx, &sdk.CallToolParams{Name: name, Arguments: args})
	var wire *jsonrpc.Error
	switch {
	case err == nil:
		return result(res), nil
	case ctx.Err() != nil:
		return tools.Result{}, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return tools.ErrorResult("MCP server %q did not answer the call of %s within %s; it may have acted all the same.", c.server.Name, as, c.pool.cfg.CallTimeout), nil
	case errors.As(err, &wire):
		return tools.ErrorResult("MCP server %q refused the call of %s: %s", c.server.Name, as, wire.Message), nil
	}
	if c.drop(s) {
		c.log.Warn("MCP server failed during a call", zap.String("tool", name), zap.Error(err))
	}
	return tools.ErrorResult("MCP server %q failed during the call of %s (%v); it may have acted before it failed. It is started again on the next call.",
		c.server.Name, as, err), nil
}

// indexOf returns the index of the tool called name on the server, or -1.
func indexOf(l []listed, name string) int {
	return slices.IndexFunc(l, func(x listed) bool { return x.name == name })
}

// namesOf returns the names of the listed tools, for error messages.
func namesOf(l []listed) string {
	if len(l) == 0 {
		return "no tools"
	}
	names := make([]string, len(l))
	for i, x := range l {
		names[i] = x.name
	}
	return strings.Join(names, ", ")
}
