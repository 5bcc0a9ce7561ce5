package validators

// NoToolCallName identifies the no_tool_call validator in events and metrics.
const NoToolCallName = "no_tool_call"

// DefaultNoToolCallCorrection is sent when an answer called no tool.
const DefaultNoToolCallCorrection = "VALIDATION CHECK: your previous response had no tool call. " +
	"Every response must call at least one tool. If work remains, call the tool that does it now. " +
	"If you are done, call `respond` now, alone, with your reply to the user."

// NoToolCall fires on an answer without any tool call: free text alone is
// never a correct answer when turns end with respond.
type NoToolCall struct {
	// Correction overrides DefaultNoToolCallCorrection when not empty.
	Correction string
}

var _ Validator = NoToolCall{}

// Name returns "no_tool_call".
func (NoToolCall) Name() string { return NoToolCallName }

// Check fires when a has no tool call.
func (v NoToolCall) Check(a *Answer) (Correction, bool) {
	if a.ToolCalls > 0 {
		return Correction{}, false
	}
	return Correction{Validator: NoToolCallName, Text: or(v.Correction, DefaultNoToolCallCorrection)}, true
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
