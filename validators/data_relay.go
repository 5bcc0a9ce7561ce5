package validators

import (
	"unicode/utf8"

	"github.com/engine-brain/brain/conversation"
)

// DataRelayName identifies the data_relay validator in events and metrics.
const DataRelayName = "data_relay"

// DefaultDataRelayCorrection is sent when a reply is too brief for the
// tool results before it.
const DefaultDataRelayCorrection = "VALIDATION CHECK: your reply is much shorter than the tool results it is based on, " +
	"and the user cannot see tool results. Relay the data the user asked for in your reply " +
	"(a table or a list where it helps), then call `respond` again, alone."

// DataRelay fires on a respond reply of at most MaxReplyChars after a tool
// result of at least MinToolResultChars in the same turn: the model most
// likely did not pass the data on. Lengths count characters (runes), so the
// rule is the same in every script. The thresholds have no defaults here:
// the recipe owns them (500 and 200 unless it says otherwise).
type DataRelay struct {
	MinToolResultChars int
	MaxReplyChars      int
	// Correction overrides DefaultDataRelayCorrection when not empty.
	Correction string
}

var _ Validator = DataRelay{}

// Name returns "data_relay".
func (DataRelay) Name() string { return DataRelayName }

// Check fires when a is a brief reply after a long tool result.
func (v DataRelay) Check(a *Answer) (Correction, bool) {
	if !a.IsReply || utf8.RuneCountInString(a.Reply) > v.MaxReplyChars {
		return Correction{}, false
	}
	if longestToolResult(a.Turn) < v.MinToolResultChars || presented(a.Turn) {
		return Correction{}, false
	}
	return Correction{Validator: DataRelayName, Text: or(v.Correction, DefaultDataRelayCorrection)}, true
}

// presented reports whether the turn showed the user a presentation: the
// data reached the user that way, so a brief reply is the right reply.
func presented(turn []conversation.Event) bool {
	for i := range turn {
		if turn[i].Presentation != nil {
			return true
		}
	}
	return false
}

// longestToolResult is the length of the longest successful tool result of
// the turn, as the model saw it.
func longestToolResult(turn []conversation.Event) int {
	longest := 0
	for i := range turn {
		r := turn[i].ToolCallResponse
		if r == nil || r.IsError {
			continue
		}
		n := utf8.RuneCountInString(conversation.TextOf(conversation.AddressedTo(r.Content, conversation.RoleAssistant)))
		longest = max(longest, n)
	}
	return longest
}
