package conversation

// UserView returns what a person sees of events: the same events, IDs and
// shape, filtered per event family (the tell_user design):
//
//   - turn starts pass;
//   - inbox messages pass when a user sent them;
//   - chat responses pass when they are messages or structured answers;
//     reasoning is dropped; so is a response not addressed to the user;
//   - tool call requests are dropped (arguments are not addressed to people);
//   - tool results pass reduced to the blocks addressed to the user, and are
//     dropped when none is;
//   - presentations and phase changes pass;
//   - approval requests pass reduced to the calls a user may decide, and
//     are dropped when none is (an operator's are not the user's business);
//   - system notices whose code people are told of (userNoticeTexts) pass
//     reduced to a short text for people, code kept; others are dropped:
//     a turn that failed or stopped early says so, while
//     the notice's own text, written for operators, stays in the log;
//   - a head's events (Event.Aside) are dropped: they are the engine's;
//   - everything else is dropped, including events of unknown types.
//
// The result is a projection, not a valid conversation (a tool result has no
// request): never feed it to [ProviderView] or storage. The input events are
// never modified: an event whose content is reduced is a copy with its own
// payload; events that pass unchanged share their payloads with the input.
func UserView(events []Event) []Event {
	out := make([]Event, 0, len(events))
	for i := range events {
		e := &events[i]
		if e.Aside() {
			continue
		}
		switch e.Type {
		case TypeTurnStart, TypePresentation, TypePhaseChange:
			out = append(out, *e)
		case TypeInboxMessage:
			if m := e.InboxMessage; m != nil && m.Kind == KindUser {
				out = append(out, *e)
			}
		case TypeChatResponse:
			if c := e.ChatResponse; c != nil && c.AddressedTo(RoleUser) && (c.Variant == VariantMessage || c.Variant == VariantStructured) {
				out = append(out, *e)
			}
		case TypeToolCallResponse:
			r := e.ToolCallResponse
			if r == nil {
				continue
			}
			content := AddressedTo(r.Content, RoleUser)
			if len(content) == 0 {
				continue
			}
			c := *e
			if len(content) != len(r.Content) {
				reduced := *r
				reduced.Content = content
				c.ToolCallResponse = &reduced
			}
			out = append(out, c)
		case TypeSystemNotice:
			// A notice people are told of (its code has a text for them);
			// an engine's own (a zaphod head's failure) stays the operator's.
			if n := e.SystemNotice; n != nil {
				if text, ok := userNoticeTexts[n.Code]; ok {
					c := *e
					c.SystemNotice = &SystemNotice{Code: n.Code, Text: text}
					out = append(out, c)
				}
			}
		case TypeApprovalRequested:
			r := e.ApprovalRequested
			if r == nil {
				continue
			}
			var calls []PendingCall
			for _, c := range r.Calls {
				if c.By == ApproverUser {
					calls = append(calls, c)
				}
			}
			if len(calls) == 0 {
				continue
			}
			c := *e
			c.ApprovalRequested = &ApprovalRequested{Calls: calls}
			out = append(out, c)
		}
	}
	return out
}

// userNoticeTexts are the texts a user sees for the codes of system notices
// (the notices the round loop and the node write: engines/rounds,
// internal/node); the notice's own text may name providers, limits and
// errors, which are for operators.
var userNoticeTexts = map[string]string{
	"model_error":      "Something went wrong while answering, so this turn ended without an answer. Please try again later.",
	"model_auth":       "Something went wrong while answering, so this turn ended without an answer. Please try again later.",
	"model_payload":    "Something went wrong while answering, so this turn ended without an answer. Please try again later.",
	"empty_answer":     "No answer came back this time. Please try again.",
	"max_rounds":       "This turn took too many steps and stopped before it finished.",
	"turn_timeout":     "This turn took too long and stopped before it finished.",
	"token_budget":     "This conversation has used up its allowance, so this turn stopped.",
	"day_token_budget": "Today's allowance is used up; this conversation goes on tomorrow.",
	"turn_halted":      "This turn was interrupted before it finished.",
	"turn_failed":      "Something went wrong and this conversation stopped.",
	// engines/vogon
	"phase_gate_failed": "A step of this work could not be completed, so it stopped.",
}
