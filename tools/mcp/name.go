package mcp

import (
	"fmt"
	"regexp"
	"strings"
)

// NameSeparator joins a server's name and its tool's name in the name the
// model calls: "github__search_issues". A recipe writes the same tool
// "github.search_issues" (tools.MCPSeparator), but providers accept no dots
// in tool names.
const NameSeparator = "__"

// MaxNameLen is the longest tool name the model providers accept.
const MaxNameLen = 64

// modelNamePattern is the tool names the model providers accept.
var modelNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ModelName returns the name the model calls tool of server by: server,
// NameSeparator and tool, where every character of tool that providers do
// not accept (MCP allows dots, say) is replaced by '_'. It fails when the
// result is longer than MaxNameLen or server has characters providers do
// not accept.
func ModelName(server, tool string) (string, error) {
	name := server + NameSeparator + strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, tool)
	switch {
	case tool == "":
		return "", fmt.Errorf("MCP server %q lists a tool without a name", server)
	case len(name) > MaxNameLen:
		return "", fmt.Errorf("tool %q of MCP server %q would be called %q by the model, %d characters, more than the %d that providers accept; give the server a shorter name in mcp_servers",
			tool, server, name, len(name), MaxNameLen)
	case !modelNamePattern.MatchString(name):
		return "", fmt.Errorf("MCP server name %q has characters model providers do not accept in tool names; use letters, digits, '-' and '_'", server)
	}
	return name, nil
}
