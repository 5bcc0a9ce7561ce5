package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFinish(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    string
		want    FinishArgs
		wantErr string
	}{
		{"status absent defaults to done", `{"result":"3 sources agree: 42."}`, FinishArgs{Result: "3 sources agree: 42.", Status: FinishDone}, ""},
		{"status null defaults to done", `{"result":"r","status":null}`, FinishArgs{Result: "r", Status: FinishDone}, ""},
		{"explicit done", `{"result":"r","status":"done"}`, FinishArgs{Result: "r", Status: FinishDone}, ""},
		{"explicit failed", `{"result":"All 3 mirrors returned 503.","status":"failed"}`, FinishArgs{Result: "All 3 mirrors returned 503.", Status: FinishFailed}, ""},
		{"result kept verbatim", `{"result":"  | a |\n|---|\n"}`, FinishArgs{Result: "  | a |\n|---|\n", Status: FinishDone}, ""},
		{"missing result", `{"status":"done"}`, FinishArgs{}, FinishResultMissing},
		{"empty args", ``, FinishArgs{}, FinishResultMissing},
		{"empty result", `{"result":""}`, FinishArgs{}, FinishResultBlank},
		{"blank result", `{"result":" \n\t "}`, FinishArgs{}, FinishResultBlank},
		{"unknown status", `{"result":"r","status":"ok"}`, FinishArgs{},
			`finish_task "status" must be "done" or "failed" (got "ok"); leave it out for "done"`},
		{"empty status", `{"result":"r","status":""}`, FinishArgs{},
			`finish_task "status" must be "done" or "failed" (got ""); leave it out for "done"`},
		{"wrong result type", `{"result":42}`, FinishArgs{}, "invalid arguments for finish_task: /result: got number, want string"},
		{"not JSON", `{"result":`, FinishArgs{}, "finish_task arguments are not a valid JSON object (unexpected end of JSON input)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFinish(json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseFinish error = %v, want %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrInvalidArguments) {
					t.Errorf("error does not match ErrInvalidArguments")
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFinish: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseFinish (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinishResultShape(t *testing.T) {
	t.Parallel()
	for _, a := range []FinishArgs{{Result: "All done.", Status: FinishDone}, {Result: "Could not reach the site.", Status: FinishFailed}} {
		got := FinishResult(a)
		if got.IsError {
			t.Error("IsError = true")
		}
		// The result goes to the parent through the engine: the log holds
		// only the acknowledgement, for the model.
		want := jsonValue(t, `[
			{"type": "text", "text": "Task finished; the result was sent to the parent process.", "annotations": {"audience": ["assistant"]}}
		]`)
		if diff := cmp.Diff(want, blocksJSON(t, got.Content)); diff != "" {
			t.Errorf("FinishResult(%+v) JSON (-want +got):\n%s", a, diff)
		}
	}
}

func TestFinishTaskDefinition(t *testing.T) {
	t.Parallel()
	def := FinishTaskTool().Definition()
	if def.Name != FinishTask {
		t.Errorf("Name = %q, want %q", def.Name, FinishTask)
	}
	for _, s := range []string{"LAST and ONLY", "parent process", "complete and self-contained", "'failed'"} {
		if !strings.Contains(def.Description, s) {
			t.Errorf("description lacks %q: %s", s, def.Description)
		}
	}
	want := jsonValue(t, `{
		"type": "object",
		"properties": {
			"result": {
				"type": "string",
				"description": "The complete, self-contained result of the task: all the parent process receives. Markdown allowed."
			},
			"status": {
				"type": "string",
				"enum": ["done", "failed"],
				"default": "done",
				"description": "done: the task is carried out. Default.\nfailed: the task could not be carried out; say in result what stopped you and what you tried."
			}
		},
		"required": ["result"],
		"additionalProperties": false
	}`)
	if diff := cmp.Diff(want, jsonValue(t, string(def.Schema))); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

func TestFinishTaskThroughRegistry(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, FinishTaskTool())
	tests := []struct {
		name string
		args string
		want Result
	}{
		{"valid", `{"result":"Found 3 papers."}`, FinishResult(FinishArgs{Result: "Found 3 papers.", Status: FinishDone})},
		{"failed", `{"result":"No access.","status":"failed"}`, FinishResult(FinishArgs{Result: "No access.", Status: FinishFailed})},
		{"blank result", `{"result":"   "}`, ErrorResult(FinishResultBlank)},
		{"schema names the allowed statuses", `{"result":"r","status":"partial"}`,
			ErrorResult(`invalid arguments for finish_task: /status: must be one of "done", "failed"`)},
		{"unknown property", `{"result":"r","summary":"s"}`,
			ErrorResult("invalid arguments for finish_task: /summary: unknown property (allowed: result, status)")},
		{"missing result", `{}`, ErrorResult("invalid arguments for finish_task: /result: missing required property")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.Call(context.Background(), call(FinishTask, tt.args))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinishNotAloneText(t *testing.T) {
	t.Parallel()
	// The engine sends this exact text.
	if FinishNotAloneError != "finish_task must be the LAST and ONLY tool call in a response" {
		t.Errorf("FinishNotAloneError = %q", FinishNotAloneError)
	}
}
