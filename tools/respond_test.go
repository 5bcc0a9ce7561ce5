package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRespond(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    string
		want    RespondArgs
		wantErr string
	}{
		{"flag absent defaults to true", `{"message":"Here it is."}`, RespondArgs{"Here it is.", true}, ""},
		{"flag null defaults to true", `{"message":"Hi","awaiting_user_input":null}`, RespondArgs{"Hi", true}, ""},
		{"explicit true", `{"message":"Hi","awaiting_user_input":true}`, RespondArgs{"Hi", true}, ""},
		{"explicit false", `{"message":"Workers started.","awaiting_user_input":false}`, RespondArgs{"Workers started.", false}, ""},
		{"message kept verbatim", `{"message":"  | a |\n|---|\n"}`, RespondArgs{"  | a |\n|---|\n", true}, ""},
		{"missing message", `{"awaiting_user_input":true}`, RespondArgs{}, RespondMessageMissing},
		{"empty args", ``, RespondArgs{}, RespondMessageMissing},
		{"empty message", `{"message":""}`, RespondArgs{}, RespondMessageBlank},
		{"blank message", `{"message":" \n\t "}`, RespondArgs{}, RespondMessageBlank},
		{"wrong flag type", `{"message":"Hi","awaiting_user_input":"yes"}`, RespondArgs{},
			"invalid arguments for respond: /awaiting_user_input: got string, want boolean"},
		{"not JSON", `{"message":`, RespondArgs{}, "respond arguments are not a valid JSON object (unexpected end of JSON input)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRespond(json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseRespond error = %v, want %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrInvalidArguments) {
					t.Errorf("error does not match ErrInvalidArguments")
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRespond: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseRespond (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRespondResultShape(t *testing.T) {
	t.Parallel()
	msg := "Found **3** issues:\n\n| id | title |\n|---|---|\n| 1 | x |"
	got := RespondResult(RespondArgs{Message: msg, AwaitingUserInput: false})
	if got.IsError {
		t.Error("IsError = true")
	}
	want := jsonValue(t, `[
		{"type": "text", "text": "Found **3** issues:\n\n| id | title |\n|---|---|\n| 1 | x |",
		 "mimeType": "text/markdown", "annotations": {"audience": ["user"]}},
		{"type": "text", "text": "Reply delivered to the user.", "annotations": {"audience": ["assistant"]}}
	]`)
	if diff := cmp.Diff(want, blocksJSON(t, got.Content)); diff != "" {
		t.Errorf("RespondResult JSON (-want +got):\n%s", diff)
	}
}

func TestRespondDefinition(t *testing.T) {
	t.Parallel()
	def := RespondTool().Definition()
	if def.Name != Respond {
		t.Errorf("Name = %q, want %q", def.Name, Respond)
	}
	for _, s := range []string{"LAST and ONLY", "message", "awaiting_user_input"} {
		if !strings.Contains(def.Description, s) {
			t.Errorf("description lacks %q: %s", s, def.Description)
		}
	}
	want := jsonValue(t, `{
		"type": "object",
		"properties": {
			"message": {"type": "string", "description": "User-facing reply text. Markdown allowed."},
			"awaiting_user_input": {
				"type": "boolean",
				"default": true,
				"description": "true: the engine goes BLOCKED and waits for the user. Default.\nfalse: the engine returns to READY and picks up new pending messages on the next auto-wakeup. Use when you have spawned async workers and need no immediate user input."
			}
		},
		"required": ["message"],
		"additionalProperties": false
	}`)
	if diff := cmp.Diff(want, jsonValue(t, string(def.Schema))); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	var compacted bytes.Buffer
	if err := json.Compact(&compacted, def.Schema); err != nil || compacted.String() != string(def.Schema) {
		t.Errorf("schema is not compact JSON: %s", def.Schema)
	}
}

func TestRespondThroughRegistry(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, RespondTool())
	tests := []struct {
		name string
		args string
		want Result
	}{
		{"valid", `{"message":"Done."}`, RespondResult(RespondArgs{Message: "Done.", AwaitingUserInput: true})},
		{"blank message", `{"message":"   "}`, ErrorResult(RespondMessageBlank)},
		{"schema error first", `{"message":"Done.","awaiting_user_input":"false"}`,
			ErrorResult("invalid arguments for respond: /awaiting_user_input: got string, want boolean")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.Call(context.Background(), call(Respond, tt.args))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRespondNotAloneText(t *testing.T) {
	t.Parallel()
	// The engine sends this exact text; the architecture and the system
	// prompt convention quote it.
	if RespondNotAloneError != "respond must be the LAST and ONLY tool call in a turn" {
		t.Errorf("RespondNotAloneError = %q", RespondNotAloneError)
	}
}
