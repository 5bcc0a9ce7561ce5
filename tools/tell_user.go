package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/engine-brain/brain/conversation"
)

// Texts of tell_user.
const (
	// TellUserAck is all the model reads as the result of tell_user.
	TellUserAck = "Message shown to user."
	// TellUserMessageBlank is the error of a tell_user call with an empty
	// message.
	TellUserMessageBlank = `tell_user "message" is blank: put the text the user must see in it`
)

// TellUserDescription is the model-visible description of tell_user. It
// guards against overuse: narration and the final answer do not belong
// here.
const TellUserDescription = "Display a message directly to the user while you keep working. " +
	"Use this for progress updates with specific numbers, partial deliverables, or a direct reply " +
	"to a question the user asked mid-task: content the user must see exactly as written before " +
	"the task finishes. The message is rendered verbatim as markdown; you receive an " +
	"acknowledgement and your turn continues. Do not narrate every step or route internal " +
	"reasoning through this tool, and do not use it for your final answer: end your turn with " +
	"respond for that."

const tellUserSchema = `{
	"type": "object",
	"properties": {
		"message": {
			"type": "string",
			"description": "The text the user must see, verbatim. Markdown allowed."
		}
	},
	"required": ["message"],
	"additionalProperties": false
}`

// TellUserArgs are the arguments of a tell_user call.
type TellUserArgs struct {
	Message string `json:"message"`
}

// TellUserResult is the result of a tell_user call: the message, verbatim,
// as markdown for the user, and [TellUserAck] for the assistant, so the
// model does not read its own message twice.
func TellUserResult(message string) Result {
	return Result{Content: []conversation.Block{
		conversation.MarkdownBlock(message).For(conversation.RoleUser),
		conversation.TextBlock(TellUserAck).For(conversation.RoleAssistant),
	}}
}

// TellUserTool returns the tell_user tool: a message the user sees mid-turn,
// without ending the turn. It is a built-in only for packaging: it uses
// nothing but content blocks and their audience.
func TellUserTool() Tool { return tellUserTool{} }

type tellUserTool struct{}

var _ Tool = tellUserTool{}

func (tellUserTool) Definition() Definition {
	return Definition{Name: TellUser, Description: TellUserDescription, Schema: Compact(tellUserSchema), Replayable: true}
}

func (tellUserTool) Call(_ context.Context, args json.RawMessage) (Result, error) {
	var a TellUserArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return Result{}, reason(ErrInvalidArguments, "invalid arguments for tell_user (%v); send {\"message\": \"...\"}", err)
	}
	if strings.TrimSpace(a.Message) == "" {
		return Result{}, reason(ErrInvalidArguments, TellUserMessageBlank)
	}
	return TellUserResult(a.Message), nil
}
