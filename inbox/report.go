package inbox

import (
	"encoding/json"

	"github.com/engine-brain/brain/conversation"
)

// Report is the message that carries a worker's report to its parent's
// inbox: a process_event from "process:<child>" whose content is the
// report's JSON (conversation.InboxMessage.ProcessEvent reads it back). It
// counts against no inbox limit and unblocks nobody (the wake rule): the
// parent reads it with its next turn.
func Report(r conversation.ProcessEvent) Message {
	body, _ := json.Marshal(r) // strings and a slice of them: it cannot fail
	return Message{Kind: conversation.KindProcessEvent, From: "process:" + r.Child, Content: string(body)}
}
