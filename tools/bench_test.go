package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/engine-brain/brain/conversation"
)

// BenchmarkRegistryCallRespond measures the whole path of a turn's final
// call: lookup, decode, schema validation, the tool, the result.
func BenchmarkRegistryCallRespond(b *testing.B) {
	r := mustRegistry(b, RespondTool(), TellUserTool())
	c := conversation.ToolCall{ID: "c1", Name: Respond, Arguments: json.RawMessage(
		`{"message":"Found 3 open issues: #12 (login fails on Safari), #15 (slow search), #19 (typo on the pricing page).","awaiting_user_input":true}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Call(ctx, c); res.IsError {
			b.Fatal(res.Text())
		}
	}
}

// BenchmarkRegistryCheckInvalid measures a call with several schema
// violations, the path that formats messages.
func BenchmarkRegistryCheckInvalid(b *testing.B) {
	r := mustRegistry(b, RespondTool())
	c := conversation.ToolCall{ID: "c1", Name: Respond, Arguments: json.RawMessage(`{"awaiting_user_input":"no","text":"hi"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if r.Check(c) == nil {
			b.Fatal("no error")
		}
	}
}

// BenchmarkNewRegistry measures building the built-ins' registry (schemas
// compiled once, per process build).
func BenchmarkNewRegistry(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewRegistry(RespondTool(), TellUserTool()); err != nil {
			b.Fatal(err)
		}
	}
}
