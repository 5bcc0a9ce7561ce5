// Package mcp connects to MCP servers and exposes their tools as
// [tools.Tool] values. It knows the tools package and the MCP go-sdk, and
// nothing of recipes, engines or Redis.
//
// A [Pool] holds one connection per distinct [Server] declaration: a local
// server run as a child process over stdio (Command, Args, Env) or a remote
// one over streamable HTTP (URL). Connections are made lazily, the first
// time [Pool.Tools] or a tool call needs them, and shared by every registry
// built from the pool. [Pool.Close] ends them, stopping the children.
//
// Models accept tool names matching ^[a-zA-Z0-9_-]{1,64}$, so the tool a
// recipe writes "github.search_issues" is called "github__search_issues" by
// the model ([ModelName]); its calls and results are recorded under that
// name.
//
// A server that fails never takes the node or a turn down with it:
//
//   - a server that cannot be started, or does not answer initialize within
//     [Config.ConnectTimeout], makes [Pool.Tools] return placeholder tools
//     for the tools named one by one (their calls try the server again),
//     none for "*", and an error matching [ErrUnavailable];
//   - a server that dies during a call gives that call an error result
//     addressed to the model, naming the server and what happened; the next
//     call starts it again (once per call, never in a loop);
//   - a call that gets no answer within [Config.CallTimeout] gets an error
//     result.
//
// Calls may have effects, so the tools are not [tools.Definition.Replayable].
package mcp
