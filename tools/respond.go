package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/engine-brain/brain/conversation"
)

// Texts of the respond protocol, for the engine and tests.
const (
	// RespondNotAloneError is the error result a respond call gets when it
	// comes with other tool calls in one model response: the others run,
	// and the model answers once it has seen their results.
	RespondNotAloneError = "respond must be the LAST and ONLY tool call in a turn"
	// RespondAck is what the model reads as the result of a respond call.
	RespondAck = "Reply delivered to the user."
	// RespondMessageMissing and RespondMessageBlank are the errors of a
	// respond call without a usable message.
	RespondMessageMissing = `respond needs "message": put your reply to the user in it`
	RespondMessageBlank   = `respond "message" is blank: put your reply to the user in it`
)

// RespondDescription is the model-visible description of respond.
const RespondDescription = "Final user-facing reply for this turn. Call this exactly once per turn, " +
	"as the LAST and ONLY tool call of its response: first call the work tools you need and end " +
	"that response without respond; once you have seen their results, call respond alone. " +
	"The 'message' is what the user sees; 'awaiting_user_input' is whether the engine should " +
	"block on the user's next message (true, the default) or keep working autonomously after " +
	"this turn (false, e.g. when handing off to a worker process). Never put the user-facing " +
	"answer in plain assistant text: always go through respond."

const respondSchema = `{
	"type": "object",
	"properties": {
		"message": {
			"type": "string",
			"description": "User-facing reply text. Markdown allowed."
		},
		"awaiting_user_input": {
			"type": "boolean",
			"default": true,
			"description": "true: the engine goes BLOCKED and waits for the user. Default.\nfalse: the engine returns to READY and picks up new pending messages on the next auto-wakeup. Use when you have spawned async workers and need no immediate user input."
		}
	},
	"required": ["message"],
	"additionalProperties": false
}`

// RespondArgs are the arguments of a respond call.
type RespondArgs struct {
	Message           string `json:"message"`
	AwaitingUserInput bool   `json:"awaiting_user_input"`
}

// ParseRespond decodes the arguments of a respond call. awaiting_user_input
// is true when absent (or null); message must be present and not blank. The
// errors are written for the model. It does not check unknown fields: the
// registry's schema check does.
func ParseRespond(args json.RawMessage) (RespondArgs, error) {
	var raw struct {
		Message           *string `json:"message"`
		AwaitingUserInput *bool   `json:"awaiting_user_input"`
	}
	if len(strings.TrimSpace(string(args))) > 0 {
		if err := json.Unmarshal(args, &raw); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return RespondArgs{}, reason(ErrInvalidArguments, "invalid arguments for respond: /%s: got %s, want %s", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
			}
			return RespondArgs{}, reason(ErrInvalidArguments, "respond arguments are not a valid JSON object (%v)", err)
		}
	}
	switch {
	case raw.Message == nil:
		return RespondArgs{}, reason(ErrInvalidArguments, RespondMessageMissing)
	case strings.TrimSpace(*raw.Message) == "":
		return RespondArgs{}, reason(ErrInvalidArguments, RespondMessageBlank)
	}
	a := RespondArgs{Message: *raw.Message, AwaitingUserInput: true}
	if raw.AwaitingUserInput != nil {
		a.AwaitingUserInput = *raw.AwaitingUserInput
	}
	return a, nil
}

// jsonKind names a Go kind (bool, string) as the JSON type a model knows.
func jsonKind(k string) string {
	if k == "bool" {
		return "boolean"
	}
	return k
}

// RespondResult is the result of a valid respond call: the message,
// verbatim, as markdown for the user, and [RespondAck] for the assistant.
// This is how the answer reaches the user view; there is no separate
// display event.
func RespondResult(a RespondArgs) Result {
	return Result{Content: []conversation.Block{
		conversation.MarkdownBlock(a.Message).For(conversation.RoleUser),
		conversation.TextBlock(RespondAck).For(conversation.RoleAssistant),
	}}
}

// RespondTool returns the respond tool: the marker that ends a turn. It has no
// side effect; the engine reads the call (see [ParseRespond]) and decides
// what happens to the process.
func RespondTool() Tool { return respondTool{} }

type respondTool struct{}

var _ Tool = respondTool{}

func (respondTool) Definition() Definition {
	return Definition{Name: Respond, Description: RespondDescription, Schema: Compact(respondSchema), Replayable: true}
}

func (respondTool) Call(_ context.Context, args json.RawMessage) (Result, error) {
	a, err := ParseRespond(args)
	if err != nil {
		return Result{}, err
	}
	return RespondResult(a), nil
}
