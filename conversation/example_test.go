package conversation_test

import (
	"encoding/json"
	"fmt"

	"github.com/engine-brain/brain/conversation"
)

// A tell_user result carries the message for the user and an
// acknowledgement for the model; each view keeps its own block.
func Example_audience() {
	events := []conversation.Event{
		conversation.NewInboxMessage("1-0", conversation.KindUser, "user:alice", "Migrate the call sites."),
		conversation.NewToolCallRequest("call_1", "tell_user", json.RawMessage(`{"message":"Phase 1 done."}`)),
		conversation.NewToolCallResponse("call_1", "tell_user", []conversation.Block{
			conversation.MarkdownBlock("Phase 1 done.").For(conversation.RoleUser),
			conversation.TextBlock("Message shown to user.").For(conversation.RoleAssistant),
		}, false),
	}

	fmt.Println("model:")
	for _, m := range conversation.ProviderView(events) {
		fmt.Printf("  %s: %q %d call(s)\n", m.Role, m.Text(), len(m.ToolCalls))
	}
	fmt.Println("person:")
	for _, e := range conversation.UserView(events) {
		switch {
		case e.InboxMessage != nil:
			fmt.Printf("  %s: %q\n", e.Type, e.InboxMessage.Content)
		case e.ToolCallResponse != nil:
			fmt.Printf("  %s: %q\n", e.Type, conversation.TextOf(e.ToolCallResponse.Content))
		}
	}
	// Output:
	// model:
	//   user: "Migrate the call sites." 0 call(s)
	//   assistant: "" 1 call(s)
	//   tool: "Message shown to user." 0 call(s)
	// person:
	//   inbox_message: "Migrate the call sites."
	//   tool_call_response: "Phase 1 done."
}
