package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/mcp"
	"github.com/engine-brain/brain/tools/mcp/mcptest"
)

// newPool returns a pool closed when the test ends.
func newPool(t *testing.T, cfg mcp.Config) *mcp.Pool {
	t.Helper()
	p, err := mcp.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// registry returns the registry of the tools that names ask for on s.
func registry(t *testing.T, p *mcp.Pool, s mcp.Server, names ...string) *tools.Registry {
	t.Helper()
	ts, err := p.Tools(t.Context(), s, names)
	if err != nil {
		t.Fatalf("Tools(%s, %q): %v", s.Name, names, err)
	}
	reg, err := tools.NewRegistry(ts...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func call(t *testing.T, reg *tools.Registry, name, args string) tools.Result {
	t.Helper()
	return reg.Call(t.Context(), conversation.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

func TestModelName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		server, tool, want, err string
	}{
		{server: "github", tool: "search_issues", want: "github__search_issues"},
		{server: "fs", tool: "files.read", want: "fs__files_read"},
		{server: "fs", tool: "lire/écrire", want: "fs__lire__crire"},
		{server: "s", tool: strings.Repeat("t", 61), want: "s__" + strings.Repeat("t", 61)},
		{server: "s", tool: strings.Repeat("t", 62), err: "more than the 64 that providers accept"},
		{server: "s.x", tool: "t", err: "characters model providers do not accept"},
		{server: "s", tool: "", err: "without a name"},
	} {
		got, err := mcp.ModelName(tc.server, tc.tool)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ModelName(%q, %q) = %q, %v; want an error with %q", tc.server, tc.tool, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ModelName(%q, %q) = %q, %v; want %q", tc.server, tc.tool, got, err, tc.want)
		}
	}
}

func TestToolsNamedAndCalled(t *testing.T) {
	t.Parallel()
	p := newPool(t, mcp.Config{})
	srv := mcptest.Server("srv", mcptest.Tools)

	reg := registry(t, p, srv, "echo", "show")
	if diff := cmp.Diff([]string{"srv__echo", "srv__show"}, reg.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	def := reg.Definitions()[0]
	if def.Description != "Echoes text." || def.Replayable {
		t.Errorf("echo's definition = %+v; want the server's description, not replayable", def)
	}
	if got := call(t, reg, "srv__echo", `{"text":"hi"}`); got.IsError || got.Text() != "echo: hi" {
		t.Errorf("echo = %+v; want echo: hi", got)
	}
	// The registry checks the arguments against the server's schema.
	res, err := reg.Invoke(t.Context(), conversation.ToolCall{ID: "c2", Name: "srv__echo", Arguments: json.RawMessage(`{"text":3}`)})
	if !res.IsError || !errors.Is(err, tools.ErrInvalidArguments) || !strings.Contains(res.Text(), "/text") {
		t.Errorf("echo with a number = %+v, %v; want an invalid-arguments error about /text", res, err)
	}

	all := registry(t, p, srv, "*")
	want := []string{"srv__crash", "srv__echo", "srv__fail", "srv__files_read", "srv__pid", "srv__show"} // the server's order
	if diff := cmp.Diff(want, all.Names()); diff != "" {
		t.Errorf("names of srv.* (-want +got):\n%s", diff)
	}
	if got := call(t, all, "srv__files_read", `{}`); got.Text() != "read" {
		t.Errorf("files.read = %+v; want read (called by its name on the server)", got)
	}
}

func TestAudienceKept(t *testing.T) {
	t.Parallel()
	p := newPool(t, mcp.Config{})
	reg := registry(t, p, mcptest.Server("srv", mcptest.Tools), "show", "fail")

	half := 0.5
	want := []conversation.Block{
		conversation.TextBlock("report for the user").For(conversation.RoleUser),
		{Type: conversation.BlockText, Text: "summary for the model", Annotations: &conversation.Annotations{
			Audience: []conversation.Role{conversation.RoleAssistant}, Priority: &half}},
		conversation.ResourceBlock(conversation.Resource{URI: "file:///report.txt", MimeType: "text/plain", Text: "the report"}),
	}
	got := call(t, reg, "srv__show", `{}`)
	if got.IsError {
		t.Fatalf("show failed: %s", got.Text())
	}
	if diff := cmp.Diff(want, got.Content); diff != "" {
		t.Errorf("show's blocks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]conversation.Block{want[0], want[2]}, conversation.AddressedTo(got.Content, conversation.RoleUser)); diff != "" {
		t.Errorf("what the user sees (-want +got):\n%s", diff)
	}

	// A failed result is for the model.
	failed := call(t, reg, "srv__fail", `{}`)
	wantFail := tools.ErrorResult("fail: as asked")
	if diff := cmp.Diff(wantFail, failed); diff != "" {
		t.Errorf("fail (-want +got):\n%s", diff)
	}
}

func TestCrashMidCall(t *testing.T) {
	t.Parallel()
	p := newPool(t, mcp.Config{})
	reg := registry(t, p, mcptest.Server("srv", mcptest.Tools), "pid", "crash", "echo")

	before := call(t, reg, "srv__pid", `{}`).Text()
	got := call(t, reg, "srv__crash", `{}`)
	if !got.IsError || !strings.Contains(got.Text(), `MCP server "srv" failed during the call of srv__crash`) ||
		len(conversation.AddressedTo(got.Content, conversation.RoleUser)) > 0 {
		t.Errorf("crash = %+v; want an error result for the model naming the server", got)
	}
	// The next call starts the server again.
	if got := call(t, reg, "srv__echo", `{"text":"again"}`); got.IsError || got.Text() != "echo: again" {
		t.Errorf("echo after the crash = %+v; want echo: again", got)
	}
	if after := call(t, reg, "srv__pid", `{}`).Text(); after == before || after == "" {
		t.Errorf("pid after the crash = %q, before %q; want a new process", after, before)
	}
}

func TestConcurrentCallsShareOneServer(t *testing.T) {
	t.Parallel()
	p := newPool(t, mcp.Config{})
	srv := mcptest.Server("srv", mcptest.Tools)
	// Two registries of the same declaration share its process.
	a, b := registry(t, p, srv, "pid", "echo"), registry(t, p, srv, "pid")
	pids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range pids {
		reg := a
		if i%2 == 1 {
			reg = b
		}
		wg.Go(func() {
			pids[i] = reg.Call(t.Context(), conversation.ToolCall{ID: "c", Name: "srv__pid", Arguments: json.RawMessage(`{}`)}).Text()
		})
	}
	wg.Wait()
	for _, pid := range pids {
		if pid != pids[0] || pid == "" {
			t.Fatalf("pids = %q; want one process", pids)
		}
	}
}

func TestUnavailableServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		server mcp.Server
		cfg    mcp.Config
		want   string
	}{
		{"missing command", mcp.Server{Name: "gone", Command: filepath.Join(t.TempDir(), "no-such-server")}, mcp.Config{},
			`MCP server "gone" could not be started`},
		{"exits at once", mcptest.Server("gone", mcptest.Broken), mcp.Config{}, mcptest.BrokenLine},
		{"never answers", mcptest.Server("gone", mcptest.Hang), mcp.Config{ConnectTimeout: 50 * time.Millisecond},
			`MCP server "gone" did not answer within 50ms`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPool(t, tc.cfg)
			ts, err := p.Tools(t.Context(), tc.server, []string{"search", "*"})
			if !errors.Is(err, mcp.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Tools = %v; want ErrUnavailable saying %q", err, tc.want)
			}
			// search, named one by one, has a placeholder; * gives nothing.
			reg, err := tools.NewRegistry(ts...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"gone__search"}, reg.Names()); diff != "" {
				t.Fatalf("tools (-want +got):\n%s", diff)
			}
			got := call(t, reg, "gone__search", `{"q":"x"}`)
			if !got.IsError || !strings.Contains(got.Text(), "gone__search was not called") || !strings.Contains(got.Text(), tc.want) {
				t.Errorf("call = %+v; want an error result saying %q", got, tc.want)
			}
			if len(conversation.AddressedTo(got.Content, conversation.RoleUser)) > 0 {
				t.Errorf("call = %+v; want it addressed to the model only", got)
			}
		})
	}
}

func TestRecovery(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	p := newPool(t, mcp.Config{Clock: clock, RetryDelay: time.Minute})

	// The server's command appears after the first attempt.
	srv := mcptest.Server("late", mcptest.Tools)
	exe := srv.Command
	srv.Command = filepath.Join(t.TempDir(), "late-server")
	ts, err := p.Tools(t.Context(), srv, []string{"echo", "*"})
	if !errors.Is(err, mcp.ErrUnavailable) || len(ts) != 1 {
		t.Fatalf("Tools = %d tools, %v; want a placeholder and ErrUnavailable", len(ts), err)
	}
	if err := os.Symlink(exe, srv.Command); err != nil {
		t.Fatal(err)
	}
	// Within RetryDelay, building tools does not try again...
	if _, err := p.Tools(t.Context(), srv, []string{"*"}); !errors.Is(err, mcp.ErrUnavailable) {
		t.Fatalf("Tools within the retry delay = %v; want the last failure", err)
	}
	// ...but a call does.
	got, err := ts[0].Call(t.Context(), json.RawMessage(`{"text":"back"}`))
	if err != nil || got.IsError || got.Text() != "echo: back" {
		t.Errorf("placeholder call = %+v, %v; want echo: back", got, err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	reg := registry(t, p, srv, "*")
	if reg.Len() != 6 {
		t.Errorf("tools once the server is up = %q; want 6", reg.Names())
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	p := newPool(t, mcp.Config{})
	bad := mcptest.Server("srv", mcptest.BadSchema)
	_, err := p.Tools(t.Context(), bad, []string{"bad"})
	if err == nil || !strings.Contains(err.Error(), `tool "bad" of MCP server "srv" has an input schema brain cannot use`) {
		t.Errorf("Tools(bad) = %v; want an error naming the server and the tool", err)
	}
	// * leaves the tool out.
	if reg := registry(t, p, bad, "*"); !cmp.Equal(reg.Names(), []string{"srv__echo"}) {
		t.Errorf("srv.* = %q; want only srv__echo", reg.Names())
	}

	_, err = p.Tools(t.Context(), mcptest.Server("srv", mcptest.Tools), []string{"echo", "serch"})
	if !errors.Is(err, tools.ErrNotAvailable) || !strings.Contains(err.Error(), `MCP server "srv" has no tool "serch" (it has: crash, echo, fail, files.read, pid, show)`) {
		t.Errorf("Tools(serch) = %v; want ErrNotAvailable listing the server's tools", err)
	}
	long := mcptest.Server(strings.Repeat("s", 60), mcptest.Tools)
	if _, err := p.Tools(t.Context(), long, []string{"echo"}); err == nil || !strings.Contains(err.Error(), "shorter name") {
		t.Errorf("Tools with a long server name = %v; want an error about the name's length", err)
	}
	if _, err := p.Tools(t.Context(), mcp.Server{Name: "x"}, []string{"echo"}); err == nil || !strings.Contains(err.Error(), "neither a command nor a url") {
		t.Errorf("Tools of a server without command or url = %v", err)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	p := newPool(t, mcp.Config{})
	reg := registry(t, p, mcptest.Server("srv", mcptest.Tools), "echo")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	got := call(t, reg, "srv__echo", `{"text":"x"}`)
	if !got.IsError || !strings.Contains(got.Text(), "closed") {
		t.Errorf("call after Close = %+v; want an error result", got)
	}
	if _, err := p.Tools(t.Context(), mcptest.Server("srv", mcptest.Tools), []string{"echo"}); !errors.Is(err, mcp.ErrClosed) {
		t.Errorf("Tools after Close = %v; want ErrClosed", err)
	}
}

func TestStreamableHTTP(t *testing.T) {
	t.Parallel()
	s := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes."},
		func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "remote: " + a.Text}}}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer hs.Close()
	p, err := mcp.NewPool(mcp.Config{HTTPClient: hs.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	reg := registry(t, p, mcp.Server{Name: "remote", URL: hs.URL}, "echo")
	if got := call(t, reg, "remote__echo", `{"text":"hi"}`); got.IsError || got.Text() != "remote: hi" {
		t.Errorf("remote echo = %+v; want remote: hi", got)
	}
}

// A remote server's tool calls carry the W3C traceparent of the call's
// span.
func TestStreamableHTTPCarriesTraceParent(t *testing.T) {
	t.Parallel()
	s := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
		})
	var mu sync.Mutex
	var parents []string
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parents = append(parents, r.Header.Get("traceparent"))
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close) // after the pool's Close, which ends the session's stream
	p := newPool(t, mcp.Config{})
	reg := registry(t, p, mcp.Server{Name: "remote", URL: hs.URL}, "echo")

	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(t.Context(), sc)
	if got := reg.Call(ctx, conversation.ToolCall{ID: "c1", Name: "remote__echo", Arguments: json.RawMessage(`{}`)}); got.IsError {
		t.Fatalf("remote echo = %+v", got)
	}
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(parents, want) {
		t.Errorf("traceparents the server got: %q; want the call's, %s", parents, want)
	}
}
