package mcp_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/engine-brain/brain/tools/mcp/mcptest"
)

// TestMain runs the test binary as the MCP test server when asked to, and
// otherwise checks that no test leaves a goroutine behind (a session's
// watcher, a child's stderr copier).
func TestMain(m *testing.M) {
	mcptest.Main()
	goleak.VerifyTestMain(m)
}
