package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTellUserResultShape(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, TellUserTool())
	msg := "Phase 1 done: all 14 call sites migrated. Starting on the test suite next; this will take a few more minutes."
	got := r.Call(context.Background(), call(TellUser, `{"message":"`+msg+`"}`))
	if got.IsError {
		t.Fatalf("IsError: %s", got.Text())
	}
	// The RFD's shape, verbatim.
	want := jsonValue(t, `[
		{
			"type": "text",
			"text": "Phase 1 done: all 14 call sites migrated. Starting on the test suite next; this will take a few more minutes.",
			"mimeType": "text/markdown",
			"annotations": { "audience": ["user"] }
		},
		{
			"type": "text",
			"text": "Message shown to user.",
			"annotations": { "audience": ["assistant"] }
		}
	]`)
	if diff := cmp.Diff(want, blocksJSON(t, got.Content)); diff != "" {
		t.Errorf("tell_user result JSON (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(TellUserResult(msg), got); diff != "" {
		t.Errorf("TellUserResult differs from the call's result (-want +got):\n%s", diff)
	}
}

func TestTellUserErrors(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, TellUserTool())
	tests := []struct {
		name string
		args string
		want string
	}{
		{"missing message", `{}`, "invalid arguments for tell_user: /message: missing required property"},
		{"blank message", `{"message":"  "}`, TellUserMessageBlank},
		{"extra property", `{"message":"hi","loud":true}`, "invalid arguments for tell_user: /loud: unknown property (allowed: message)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.Call(context.Background(), call(TellUser, tt.args))
			if diff := cmp.Diff(ErrorResult("%s", tt.want), got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTellUserDefinition(t *testing.T) {
	t.Parallel()
	def := TellUserTool().Definition()
	if def.Name != TellUser {
		t.Errorf("Name = %q", def.Name)
	}
	// The description guards against overuse.
	for _, s := range []string{"progress updates", "partial deliverables", "final answer", "respond", "Do not narrate"} {
		if !strings.Contains(def.Description, s) {
			t.Errorf("description lacks %q", s)
		}
	}
	want := jsonValue(t, `{
		"type": "object",
		"properties": {"message": {"type": "string", "description": "The text the user must see, verbatim. Markdown allowed."}},
		"required": ["message"],
		"additionalProperties": false
	}`)
	if diff := cmp.Diff(want, jsonValue(t, string(def.Schema))); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}
