package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/engine-brain/brain/conversation"
)

// The statuses of a finished task.
const (
	// FinishDone: the task is carried out. The default.
	FinishDone = "done"
	// FinishFailed: the task could not be carried out; the result says why.
	FinishFailed = "failed"
)

// Texts of the finish_task protocol, for the engine and tests.
const (
	// FinishNotAloneError is the error result a finish_task call gets when
	// it comes with other tool calls in one model response: the others run,
	// and the model finishes once it has seen their results.
	FinishNotAloneError = "finish_task must be the LAST and ONLY tool call in a response"
	// FinishAck is what the model reads as the result of a finish_task call.
	FinishAck = "Task finished; the result was sent to the parent process."
	// FinishResultMissing and FinishResultBlank are the errors of a
	// finish_task call without a usable result.
	FinishResultMissing = `finish_task needs "result": put the complete result of the task in it`
	FinishResultBlank   = `finish_task "result" is blank: put the complete result of the task in it`
)

// FinishDescription is the model-visible description of finish_task.
const FinishDescription = "End the task and hand its result to the parent process. Call this exactly once, " +
	"when the work is done (or cannot be done), as the LAST and ONLY tool call of its response: " +
	"first call the work tools you need and end that response without finish_task; once you have " +
	"seen their results, call finish_task alone. The 'result' is all the parent process receives: " +
	"make it complete and self-contained, with everything the task asked for, or, with status " +
	"'failed', what stopped you and what you tried. Never end the task with plain assistant text: " +
	"only finish_task delivers the result."

const finishSchema = `{
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
}`

// FinishArgs are the arguments of a finish_task call.
type FinishArgs struct {
	Result string `json:"result"`
	Status string `json:"status"` // FinishDone or FinishFailed
	// Data is the result parsed as JSON, when the worker's recipe has a
	// result_schema and the result matched it (the engine sets it, not
	// ParseFinish).
	Data json.RawMessage `json:"data,omitempty"`
}

// ParseFinish decodes the arguments of a finish_task call. status is
// [FinishDone] when absent (or null) and must otherwise be [FinishDone] or
// [FinishFailed]; result must be present and not blank. The errors are
// written for the model. It does not check unknown fields: the registry's
// schema check does.
func ParseFinish(args json.RawMessage) (FinishArgs, error) {
	var raw struct {
		Result *string `json:"result"`
		Status *string `json:"status"`
	}
	if len(strings.TrimSpace(string(args))) > 0 {
		if err := json.Unmarshal(args, &raw); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return FinishArgs{}, reason(ErrInvalidArguments, "invalid arguments for finish_task: /%s: got %s, want %s", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
			}
			return FinishArgs{}, reason(ErrInvalidArguments, "finish_task arguments are not a valid JSON object (%v)", err)
		}
	}
	switch {
	case raw.Result == nil:
		return FinishArgs{}, reason(ErrInvalidArguments, FinishResultMissing)
	case strings.TrimSpace(*raw.Result) == "":
		return FinishArgs{}, reason(ErrInvalidArguments, FinishResultBlank)
	}
	a := FinishArgs{Result: *raw.Result, Status: FinishDone}
	if raw.Status != nil {
		switch *raw.Status {
		case FinishDone, FinishFailed:
			a.Status = *raw.Status
		default:
			return FinishArgs{}, reason(ErrInvalidArguments, `finish_task "status" must be %q or %q (got %q); leave it out for %q`,
				FinishDone, FinishFailed, *raw.Status, FinishDone)
		}
	}
	return a, nil
}

// FinishResult is the result of a valid finish_task call: [FinishAck], for
// the assistant. The task's result reaches the parent through the engine,
// which reads the call's arguments; a worker has no user to show it to.
func FinishResult(FinishArgs) Result {
	return Result{Content: []conversation.Block{
		conversation.TextBlock(FinishAck).For(conversation.RoleAssistant),
	}}
}

// FinishTaskTool returns the finish_task tool: the marker that ends a
// worker's task. It has no side effect; the engine reads the call (see
// [ParseFinish]), sends the result to the parent process and finishes the
// worker.
func FinishTaskTool() Tool { return finishTaskTool{} }

// FinishResultSchemaConfig is the config key under which finish_task takes
// its recipe's result_schema (engines/worker's toolset passes it): the
// model is shown the schema in the description of "result".
const FinishResultSchemaConfig = "result_schema"

// finishTaskFactory builds finish_task, with the result schema its config
// may hold.
func finishTaskFactory(config map[string]any) (Tool, error) {
	plain := noConfig(FinishTask, FinishTaskTool)
	doc, ok := config[FinishResultSchemaConfig].(map[string]any)
	if !ok || len(config) != 1 {
		return plain(config)
	}
	s, err := CompileResultSchema(doc)
	if err != nil {
		return nil, fmt.Errorf("finish_task: result_schema is %w", err)
	}
	return finishTaskTool{schema: s}, nil
}

type finishTaskTool struct {
	schema *ResultSchema // nil: any text
}

var _ Tool = finishTaskTool{}

func (t finishTaskTool) Definition() Definition {
	schema := Compact(finishSchema)
	if t.schema != nil {
		schema = finishSchemaWith(t.schema)
	}
	return Definition{Name: FinishTask, Description: FinishDescription, Schema: schema, Replayable: true}
}

// finishSchemaWith is finish_task's argument schema whose "result" says it
// holds JSON matching s. result stays a string, as for every worker: the
// engine parses it (ResultSchema.Check).
func finishSchemaWith(s *ResultSchema) json.RawMessage {
	var doc map[string]any
	if err := json.Unmarshal([]byte(finishSchema), &doc); err != nil {
		panic(fmt.Sprintf("tools: finish_task schema: %v", err)) // a constant: the tests catch it
	}
	result := doc["properties"].(map[string]any)["result"].(map[string]any)
	result["description"] = FinishResultSchemaDescription + s.String()
	b, _ := json.Marshal(doc) // maps and strings: it cannot fail
	return b
}

// FinishResultSchemaDescription begins the description of finish_task's
// "result" for a worker whose recipe has a result_schema; the schema
// follows it.
const FinishResultSchemaDescription = "With status 'done': the result as a JSON text, JSON only (no other words, " +
	"no Markdown), which must match this JSON Schema. With status 'failed': what stopped you, in words. The schema: "

func (finishTaskTool) Call(_ context.Context, args json.RawMessage) (Result, error) {
	a, err := ParseFinish(args)
	if err != nil {
		return Result{}, err
	}
	return FinishResult(a), nil
}
