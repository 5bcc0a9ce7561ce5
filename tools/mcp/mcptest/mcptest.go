// Package mcptest runs the MCP server that brain's tests talk to over
// stdio: the test binary runs itself as the server. Call [Main] first in
// TestMain, and declare the server with [Server].
package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-brain/brain/tools/mcp"
)

// envMode, set in the environment of the test binary, makes it a server.
const envMode = "BRAIN_MCPTEST_MODE"

// Mode is how the test server behaves.
type Mode string

// Modes.
const (
	// Tools serves the tools of the tests (see [Server]).
	Tools Mode = "tools"
	// Hang never answers, and exits when its stdin closes.
	Hang Mode = "hang"
	// Broken writes a line to stderr and exits 1 at once.
	Broken Mode = "broken"
	// BadSchema serves echo and a tool whose input schema is not valid
	// JSON Schema ("type": "nope").
	BadSchema Mode = "bad-schema"
)

// BrokenLine is what a [Broken] server writes on stderr.
const BrokenLine = "broken: no configuration found"

// Server declares the test server, run by the test binary itself, in mode.
// In mode [Tools] it serves:
//
//   - echo {text}: "echo: " and text;
//   - show: a text block for the user, one for the assistant and an
//     embedded text resource for everyone;
//   - pid: the server's process id, to tell one process from the next;
//   - fail: an error result, "fail: as asked";
//   - crash: exits the server midway through the call;
//   - files.read: "read", to try a name the model cannot call as it is.
func Server(name string, mode Mode) mcp.Server {
	exe, err := os.Executable()
	if err != nil {
		panic(fmt.Sprintf("mcptest: the test binary cannot find itself: %v", err))
	}
	return mcp.Server{Name: name, Command: exe, Args: []string{"-test.run=^$"}, Env: map[string]string{envMode: string(mode)}}
}

// Main runs the test server and exits, when the environment says this
// process is one; otherwise it returns at once.
func Main() {
	mode, ok := os.LookupEnv(envMode)
	if !ok {
		return
	}
	switch Mode(mode) {
	case Hang:
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case Broken:
		fmt.Fprintln(os.Stderr, BrokenLine)
		os.Exit(1)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "mcptest", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	if Mode(mode) == BadSchema {
		s.AddTool(&sdk.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"nope"}}}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("bad"), nil })
	} else {
		addTools(s)
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
	}
	os.Exit(0)
}

// addTools adds the tools of mode Tools but echo.
func addTools(s *sdk.Server) {
	noArgs := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&sdk.Tool{Name: "show", Description: "Shows a report.", InputSchema: noArgs},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "report for the user", Annotations: &sdk.Annotations{Audience: []sdk.Role{"user"}}},
				&sdk.TextContent{Text: "summary for the model", Annotations: &sdk.Annotations{Audience: []sdk.Role{"assistant"}, Priority: 0.5}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///report.txt", MIMEType: "text/plain", Text: "the report"}},
			}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "pid", Description: "Tells the server's process id.", InputSchema: noArgs},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Fails."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("fail: as asked")
		})
	s.AddTool(&sdk.Tool{Name: "crash", Description: "Crashes the server.", InputSchema: noArgs},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "files.read", Description: "Reads.", InputSchema: noArgs},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("read"), nil })
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}
