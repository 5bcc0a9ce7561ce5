package tools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
)

// A recipe's tool list becomes a registry; the engine runs the model's
// calls through it and reads respond's arguments to end the turn.
func Example() {
	reg, err := tools.BuiltinCatalog().Build([]tools.Ref{{Name: tools.Respond}, {Name: tools.TellUser}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	// A mistyped call: the model reads what to fix.
	res := reg.Call(ctx, conversation.ToolCall{ID: "c1", Name: "respond", Arguments: json.RawMessage(`{"msg":"Done."}`)})
	fmt.Println(res.IsError, res.Text())

	// The corrected call ends the turn.
	call := conversation.ToolCall{ID: "c2", Name: "respond", Arguments: json.RawMessage(`{"message":"Done."}`)}
	res = reg.Call(ctx, call)
	args, _ := tools.ParseRespond(call.Arguments)
	fmt.Println(res.IsError, args.AwaitingUserInput)
	fmt.Println(conversation.TextOf(conversation.AddressedTo(res.Content, conversation.RoleAssistant)))
	// Output:
	// true invalid arguments for respond: /message: missing required property; /msg: unknown property (allowed: awaiting_user_input, message)
	// false true
	// Reply delivered to the user.
}
