package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/engine-brain/brain/conversation"
)

// fn returns a Func tool called name with schema, running fn.
func fn(name, schema string, f func(ctx context.Context, args json.RawMessage) (Result, error)) Tool {
	return Func{
		Def: Definition{Name: name, Description: "Test tool " + name + ".", Schema: json.RawMessage(schema)},
		Fn:  f,
	}
}

// echo returns a tool that answers with its arguments.
func echo(name, schema string) Tool {
	return fn(name, schema, func(_ context.Context, args json.RawMessage) (Result, error) {
		return TextResult(string(args)), nil
	})
}

// mustRegistry builds a registry or fails the test.
func mustRegistry(t testing.TB, ts ...Tool) *Registry {
	t.Helper()
	r, err := NewRegistry(ts...)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	return r
}

// call returns a tool call of name with args.
func call(name, args string) conversation.ToolCall {
	return conversation.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)}
}

// blocksJSON returns the blocks as generic JSON, for comparing shapes.
func blocksJSON(t *testing.T, blocks []conversation.Block) any {
	t.Helper()
	b, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	return jsonValue(t, string(b))
}

// jsonValue decodes s into generic JSON.
func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// assistantText returns the successful result of one plain text block
// addressed to the assistant, as the runtime-backed built-ins answer.
func assistantText(text string) Result {
	return Result{Content: []conversation.Block{conversation.TextBlock(text).For(conversation.RoleAssistant)}}
}

// testCaller is the calling process of the tests of runtime-backed tools.
var testCaller = Caller{ProcessID: "p-arthur-1", Recipe: "arthur", TurnID: "turn-7", Depth: 1}

// callerCtx returns a context that carries testCaller.
func callerCtx() context.Context {
	return WithCaller(context.Background(), testCaller)
}
