package recipes

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/engine-brain/brain/tools"
	"go.yaml.in/yaml/v3"
)

// checker checks a recipe with its parents merged in: what needs more than
// one field, or more than the schema can say.
type checker struct {
	l    *loader
	top  *document  // the recipe file checked
	root *yaml.Node // its fields, parents merged in
	r    *Recipe
	errs Errors
}

// check decodes the merged recipe of top and checks it.
func (l *loader) check(top *document, merged *yaml.Node) (*Recipe, Errors) {
	c := &checker{l: l, top: top, root: merged, r: new(Recipe)}
	if err := merged.Decode(c.r); err != nil {
		var ne *nodeError
		if errors.As(err, &ne) {
			c.at(ne.node, c.pathOf(ne.node), ne.msg)
		} else {
			c.at(merged, "", err.Error())
		}
		return nil, c.errs
	}
	c.required()
	c.name()
	toolsOK := c.tools()
	c.approvals()
	c.mcpServers()
	c.hostedTools()
	c.engine()
	c.turnEnd(toolsOK)
	c.schedules()
	c.limits()
	c.links()
	c.a2a()
	c.contract()
	c.resultSchema()
	c.phases()
	c.heads()
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return c.r, nil
}

// at records a problem at node n, in the file n comes from.
func (c *checker) at(n *yaml.Node, path, msg string) {
	n = c.nodeOrRoot(n)
	file, ok := c.l.origins[n]
	if !ok {
		file = c.top.file
	}
	c.errs = append(c.errs, Error{File: file, Line: n.Line, Col: n.Column, Path: path, Message: msg})
}

func (c *checker) nodeOrRoot(n *yaml.Node) *yaml.Node {
	if n == nil {
		return c.root
	}
	return n
}

// find walks the merged recipe along keys (string) and list indexes (int);
// it returns nil when a step is missing.
func (c *checker) find(steps ...any) *yaml.Node {
	n := deref(c.root)
	for _, s := range steps {
		switch s := s.(type) {
		case string:
			_, v := mappingValue(n, s)
			if v == nil {
				return nil
			}
			n = deref(v)
		case int:
			if n.Kind != yaml.SequenceNode || s >= len(n.Content) {
				return nil
			}
			n = deref(n.Content[s])
		}
	}
	return n
}

// nearest returns the node of the longest prefix of steps that exists.
func (c *checker) nearest(steps ...any) *yaml.Node {
	for i := len(steps); i > 0; i-- {
		if n := c.find(steps[:i]...); n != nil {
			return n
		}
	}
	return c.root
}

// key returns the key node of the last step of steps, or nil.
func (c *checker) key(steps ...any) *yaml.Node {
	parent := c.find(steps[:len(steps)-1]...)
	k, _ := mappingValue(parent, steps[len(steps)-1].(string))
	return k
}

// pathOf finds the field path of node n in the merged recipe.
func (c *checker) pathOf(n *yaml.Node) string {
	var walk func(cur *yaml.Node, path string) (string, bool)
	walk = func(cur *yaml.Node, path string) (string, bool) {
		cur = deref(cur)
		if cur == n {
			return path, true
		}
		switch cur.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if p, ok := walk(cur.Content[i+1], joinKey(path, deref(cur.Content[i]).Value)); ok {
					return p, true
				}
			}
		case yaml.SequenceNode:
			for i, e := range cur.Content {
				if p, ok := walk(e, joinIndex(path, i)); ok {
					return p, true
				}
			}
		}
		return "", false
	}
	p, _ := walk(c.root, "")
	return p
}

// required checks the fields a recipe needs once its parents are merged in.
func (c *checker) required() {
	if c.find("model") == nil {
		c.at(c.root, "model", "required field is missing; add `model:` with `provider: default` (the first configured provider), here or in the recipe this one extends")
		return
	}
	if c.r.Model.Provider == "" {
		c.at(c.find("model"), "model.provider", "required field is missing; add `provider: default` for the first configured provider, or a provider's name")
	}
}

// name checks that a recipe file is named after its recipe.
func (c *checker) name() {
	if c.top.stem == "" || c.r.Name == c.top.stem {
		return
	}
	c.at(c.find("name"), "name", fmt.Sprintf("the recipe in %s.yaml must be named `%s` (got %q); set `name: %s`, or rename the file to %s.yaml",
		c.top.stem, c.top.stem, c.r.Name, c.top.stem, c.r.Name))
}

// tools checks that every tool of the pool is a built-in tool or a tool of
// a declared MCP server, once. It reports whether all are.
func (c *checker) tools() bool {
	before := len(c.errs)
	servers := make([]string, 0, len(c.r.MCPServers))
	for _, s := range c.r.MCPServers {
		servers = append(servers, s.Name)
	}
	candidates := tools.BuiltinNames()
	for _, s := range servers {
		candidates = append(candidates, s+tools.MCPSeparator+"*")
	}
	seen := make(map[string]int)
	for i, t := range c.r.Tools {
		path := joinIndex("tools", i)
		n := c.find("tools", i)
		if n != nil && n.Kind == yaml.MappingNode {
			path += ".name"
			n = c.find("tools", i, "name")
		}
		if j, dup := seen[t.Name]; dup {
			c.at(n, path, fmt.Sprintf("`%s` is already in the pool as tools[%d]; remove one", t.Name, j))
			continue
		}
		seen[t.Name] = i
		if tools.IsBuiltin(t.Name) {
			continue
		}
		server, _, ok := tools.SplitMCP(t.Name)
		switch {
		case ok && slices.Contains(servers, server):
		case ok:
			msg := fmt.Sprintf("unknown MCP server `%s`: no server of that name in `mcp_servers`", server)
			if hint := didYouMean(server, servers); hint != "" {
				msg += hint
			} else {
				msg += fmt.Sprintf("; declare it there with `name: %s` and `command:` or `url:`", server)
			}
			c.at(n, path, msg)
		default:
			msg := fmt.Sprintf("unknown tool `%s`", t.Name)
			if hint := didYouMean(t.Name, candidates); hint != "" {
				msg += hint
			} else {
				msg += "; the built-in tools are " + backquoted(tools.BuiltinNames()) +
					", and a tool of an MCP server is written `server.tool` or `server.*` with the server declared in `mcp_servers`"
			}
			c.at(n, path, msg)
		}
	}
	return len(c.errs) == before
}

// ungated are the built-in tools whose calls cannot wait for approval, and
// why.
var ungated = map[string]string{
	tools.Respond:    "`respond` ends the turn; it cannot wait for approval",
	tools.FinishTask: "`finish_task` ends the task; it cannot wait for approval",
	tools.TellUser:   "`tell_user` only shows the user a message while the turn goes on; there is nothing to approve",
}

// approvals checks the approval of each tool: a timeout the process can
// wait out, and no approval on a tool that cannot wait for one.
func (c *checker) approvals() {
	for i, t := range c.r.Tools {
		if t.Approval == nil {
			continue
		}
		path := joinIndex("tools", i) + ".approval"
		if why, ok := ungated[t.Name]; ok {
			c.at(c.key("tools", i, "approval"), path, why+"; remove `approval`")
			continue
		}
		n := c.find("tools", i, "approval", "timeout")
		switch {
		case n == nil:
		case t.Approval.Timeout <= 0:
			c.at(n, path+".timeout", "must be more than zero; leave it out to wait without limit")
		case time.Duration(t.Approval.Timeout) > maxApprovalTimeout:
			c.at(n, path+".timeout", fmt.Sprintf("must be at most 168h (7 days) (got %s): a pending approval holds its process; choose a shorter timeout, or leave it out to wait until a person decides", describe(n)))
		}
	}
}

// mcpServers checks that every server has one way to reach it and a name of
// its own.
func (c *checker) mcpServers() {
	seen := make(map[string]int)
	for i, s := range c.r.MCPServers {
		path := joinIndex("mcp_servers", i)
		if j, dup := seen[s.Name]; dup {
			c.at(c.find("mcp_servers", i, "name"), path+".name", fmt.Sprintf("server `%s` is already declared as mcp_servers[%d]; rename or remove one", s.Name, j))
		}
		seen[s.Name] = i
		switch {
		case s.Command != "" && s.URL != "":
			c.at(c.key("mcp_servers", i, "url"), path+".url", "set either `command` (a local server) or `url` (a remote server), not both")
		case s.Command == "" && s.URL == "":
			c.at(c.find("mcp_servers", i), path, "add `command:` (a local server over stdio) or `url:` (a remote server)")
		case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0):
			field := "args"
			if len(s.Args) == 0 {
				field = "env"
			}
			c.at(c.key("mcp_servers", i, field), path+"."+field, fmt.Sprintf("`%s` applies to a local server started with `command`; remove it for a server reached by `url`", field))
		}
	}
}

// hostedTools checks that no tool is both hosted by the provider and run by
// brain.
func (c *checker) hostedTools() {
	for i, h := range c.r.Model.HostedTools {
		if c.r.HasTool(h) {
			c.at(c.find("model", "hosted_tools", i), joinIndex("model.hosted_tools", i),
				fmt.Sprintf("`%s` is also in tools; a tool is either hosted by the provider or run by brain, remove one", h))
		}
	}
}

// engine checks that the recipe names an engine kind there is, when the
// loader knows them.
func (c *checker) engine() {
	e := string(c.r.EngineKind())
	if c.l.engines == nil || slices.Contains(c.l.engines, e) {
		return
	}
	c.at(c.find("engine"), "engine", fmt.Sprintf("must be one of %s (got %q)%s", backquoted(c.l.engines), e, didYouMean(e, c.l.engines)))
}

// turnEnd checks that the tool that ends a turn is in the pool and fits the
// engine, and that validation has a tool-terminated turn to check. Whether
// the pool holds the ending tool is only checked when toolsOK: a misspelt
// `respond` is reported once, by tools.
func (c *checker) turnEnd(toolsOK bool) {
	mode, engine := c.r.TurnEndMode(), c.r.EngineKind()
	explicit := c.r.TurnEnd != ""
	where, path := c.find("turn_end"), "turn_end"
	if !explicit {
		where, path = c.nearest("tools"), "tools"
	}
	switch {
	case engine == EngineVogon: // phases end with phase_done, which the engine offers
	case engine == EngineChat && mode == TurnEndFinishTask:
		c.at(where, path, "`finish_task` ends the task of a worker; a chat recipe ends turns with `respond` (or `natural`), or set `engine: worker`")
	case engine == EngineWorker && mode == TurnEndRespond:
		c.at(where, path, "a worker ends its task with `finish_task`, it has no user to respond to; set `turn_end: finish_task` (the worker default) or `natural`")
	case !toolsOK:
	case mode == TurnEndRespond && !c.r.HasTool(toolRespond):
		if explicit {
			c.at(where, path, "turn_end `respond` needs the `respond` tool; add `- respond` to tools, or set `turn_end: natural` for the legacy mode")
		} else {
			c.at(where, path, "a chat recipe ends every turn with the `respond` tool (turn_end defaults to `respond`); add `- respond` to tools, or set `turn_end: natural` for the legacy mode")
		}
	case mode == TurnEndFinishTask && !c.r.HasTool(toolFinishTask):
		if explicit {
			c.at(where, path, "turn_end `finish_task` needs the `finish_task` tool; add `- finish_task` to tools, or set `turn_end: natural`")
		} else {
			c.at(where, path, "a worker ends its task with the `finish_task` tool (turn_end defaults to `finish_task`); add `- finish_task` to tools, or set `turn_end: natural`")
		}
	}
	if mode == TurnEndFinishTask && c.r.HasTool(tools.SpawnWorker) {
		i := slices.IndexFunc(c.r.Tools, func(t ToolRef) bool { return t.Name == tools.SpawnWorker })
		c.at(c.find("tools", i), joinIndex("tools", i),
			"a worker that ends with `finish_task` cannot wait for workers of its own: their results would reach a finished process; remove `spawn_worker`, and let the chat process that started this worker start the others")
	}
	if e := c.r.Validation.Enabled; e != nil && *e && mode == TurnEndNatural {
		c.at(c.find("validation", "enabled"), "validation.enabled",
			"validation checks turns that end with a tool call, but with `turn_end: natural` the free text is the answer; set `enabled: false` or choose another turn_end")
	}
}

// schedules checks the cron expressions.
func (c *checker) schedules() {
	for i, s := range c.r.Wakeup.Schedules {
		if _, err := s.Parse(); err != nil {
			c.at(c.find("wakeup", "schedules", i, "cron"), joinIndex("wakeup.schedules", i)+".cron", err.Error())
		}
	}
}

// limits checks what the schema's pattern cannot: a turn timeout above zero.
func (c *checker) limits() {
	if c.find("limits", "turn_timeout") != nil && c.r.Limits.TurnTimeout <= 0 {
		c.at(c.find("limits", "turn_timeout"), "limits.turn_timeout", "must be more than zero; leave it out for no limit")
	}
}

var (
	linkName    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	placeholder = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// links checks the link templates: names, a URL or absolute path, and
// well-formed {placeholders}.
func (c *checker) links() {
	for name, tmpl := range c.r.Presentation.Links {
		path := joinKey("presentation.links", name)
		if !linkName.MatchString(name) {
			c.at(c.key("presentation", "links", name), path, "a link name must be lowercase letters, digits and `_`, starting with a letter")
			continue
		}
		n := c.find("presentation", "links", name)
		if strings.HasPrefix(tmpl, "//") ||
			!strings.HasPrefix(tmpl, "/") && !strings.HasPrefix(tmpl, "https://") && !strings.HasPrefix(tmpl, "http://") {
			c.at(n, path, fmt.Sprintf("a link template must start with `/` (not `//`), `https://` or `http://` (got %q)", tmpl))
			continue
		}
		if err := checkTemplate(tmpl); err != "" {
			c.at(n, path, err)
		}
	}
}

// a2a checks that the skills of the agent card have unique ids, and that
// skills come with expose: true (an agent card nobody is served is a
// mistake, not a setting).
func (c *checker) a2a() {
	seen := map[string]int{}
	for i, sk := range c.r.A2A.Skills {
		if j, dup := seen[sk.ID]; dup {
			c.at(c.find("a2a", "skills", i, "id"), fmt.Sprintf("a2a.skills[%d].id", i),
				fmt.Sprintf("`%s` is already the id of a2a.skills[%d]; skill ids must be unique", sk.ID, j))
			continue
		}
		seen[sk.ID] = i
	}
	if len(c.r.A2A.Skills) > 0 && !c.r.A2A.Expose {
		c.at(c.find("a2a", "skills"), "a2a.skills",
			"skills are listed but the recipe is not exposed; add `expose: true` to a2a, or remove the skills")
	}
}

// checkTemplate returns what is wrong with the placeholders of a link
// template, or "".
func checkTemplate(tmpl string) string {
	rest := tmpl
	for {
		start, end := strings.IndexByte(rest, '{'), strings.IndexByte(rest, '}')
		switch {
		case start < 0 && end < 0:
			return ""
		case start < 0 || (end >= 0 && end < start):
			return fmt.Sprintf("`}` without `{` in %q; placeholders are written `{name}`", tmpl)
		case end < 0:
			return fmt.Sprintf("`{` without `}` in %q; placeholders are written `{name}`", tmpl)
		}
		if name := rest[start+1 : end]; !placeholder.MatchString(name) {
			return fmt.Sprintf("placeholder `{%s}` in %q must be a name of lowercase letters, digits and `_`, starting with a letter", name, tmpl)
		}
		rest = rest[end+1:]
	}
}

// The built-in tools that end a turn. tools.IsBuiltin knows them; a test
// keeps them in step.
const (
	toolRespond    = "respond"
	toolFinishTask = "finish_task"
)

// contract checks that a replacement of the engine's contract text names
// the tool that ends a turn, which the engine knows (loader.ending): a
// model never told of it ends turns in free text.
func (c *checker) contract() {
	text := c.r.Contract.Text
	if text == "" || c.l.ending == nil {
		return
	}
	tool := c.l.ending(c.r)
	if tool == "" || strings.Contains(text, tool) {
		return
	}
	c.at(c.find("contract", "text"), "contract.text", fmt.Sprintf(
		"replaces the %s engine's contract text but never names `%s`, the tool that ends a turn: the model would not know how to end it; say when and how to call `%s`, or leave contract out for the engine's own text (brain recipe show prints it)",
		c.r.EngineKind(), tool, tool))
}
