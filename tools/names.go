package tools

import (
	"slices"
	"strings"
)

// Names of the built-in tools. Recipes refer to tools by these names; the
// names are fixed from the start so that recipes can be linted before every
// built-in is implemented.
const (
	Respond        = "respond"
	TellUser       = "tell_user"
	PresentResults = "present_results"
	SpawnWorker    = "spawn_worker"
	FinishTask     = "finish_task"
	ScheduleWakeup = "schedule_wakeup"
	CancelWakeup   = "cancel_wakeup"
	HTTPFetch      = "http_fetch"
)

// MCPSeparator joins an MCP server's name and one of its tools in a recipe's
// tool list: "github.search_issues" names one tool, "github.*" all of them.
const MCPSeparator = "."

var builtinNames = []string{
	Respond, TellUser, PresentResults, SpawnWorker,
	FinishTask, ScheduleWakeup, CancelWakeup, HTTPFetch,
}

// BuiltinNames returns the names of all built-in tools, sorted.
func BuiltinNames() []string {
	names := slices.Clone(builtinNames)
	slices.Sort(names)
	return names
}

// IsBuiltin reports whether name is a built-in tool.
func IsBuiltin(name string) bool {
	return slices.Contains(builtinNames, name)
}

// SplitMCP splits a recipe tool reference "server.tool" into its MCP server
// and tool parts. ok is false when ref has no server prefix.
func SplitMCP(ref string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(ref, MCPSeparator)
	if !ok || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}
