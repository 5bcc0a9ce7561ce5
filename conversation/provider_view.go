package conversation

import (
	"encoding/json"
	"fmt"
)

// MessageRole is the speaker of a provider view message.
type MessageRole string

// Message roles.
const (
	MessageSystem    MessageRole = "system"
	MessageUser      MessageRole = "user"
	MessageAssistant MessageRole = "assistant"
	MessageTool      MessageRole = "tool"
)

// Texts sent in place of a tool result whose blocks are all addressed to
// the user only. They do not hint at withheld content: that would invite
// the model to retry or speculate.
const (
	PlaceholderSuccess = "Tool executed successfully."
	PlaceholderFailure = "Tool failed."
)

// Message is one provider-neutral message of the provider view. The llm
// adapters translate it to their wire formats.
type Message struct {
	Role MessageRole `json:"role"`
	// Content is the text of system and user messages, an assistant's
	// answer (text, or the JSON of a structured answer), or a tool result
	// filtered to the blocks addressed to the assistant.
	Content []Block `json:"content,omitempty"`
	// Reasoning is an assistant message's reasoning, to replay to the
	// provider that produced it.
	Reasoning []Reasoning `json:"reasoning,omitempty"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// IsError marks a failed tool result.
	IsError bool `json:"is_error,omitempty"`
	// Hosted are the states of the work a provider ran itself while it
	// wrote an assistant message (web searches), in order, each placed in
	// the message's text by its TextAt. Only the adapter whose payloads
	// they carry sends them back; any other sends the text alone.
	Hosted []HostedActivity `json:"hosted,omitempty"`
	// Citations are the sources an assistant message's text cites, their
	// ranges in the bytes of Text(), with the provider data that sends
	// them back (Replay).
	Citations []Citation `json:"citations,omitempty"`
}

// ToolCall is a tool call of an assistant message.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is a JSON object; "{}" when the call had none.
	Arguments json.RawMessage  `json:"arguments"`
	Payload   *ProviderPayload `json:"payload,omitempty"`
}

// Reasoning is reasoning of an assistant message with what its provider
// needs to accept it back.
type Reasoning struct {
	Text      string           `json:"text,omitempty"`
	Signature string           `json:"signature,omitempty"`
	Payload   *ProviderPayload `json:"payload,omitempty"`
}

// Text returns the text of m's content (see [TextOf]).
func (m Message) Text() string { return TextOf(m.Content) }

// ResultText returns the text of tool message m for a provider whose tool
// results are text: m's text, or, when its blocks hold none (images only),
// [PlaceholderFailure] or [PlaceholderSuccess].
func (m Message) ResultText() string {
	switch text := m.Text(); {
	case text != "":
		return text
	case m.IsError:
		return PlaceholderFailure
	}
	return PlaceholderSuccess
}

// ProviderView returns what the model is sent for events, in order:
//
//   - an inbox message is a user message; one not from a user starts with a
//     one-line bracketed header naming its source, e.g. "[operator message]";
//     a run of identical schedule messages drained together (the ticks of
//     one timer that piled up while the process was BLOCKED) is one
//     message whose header says how many, e.g. "[schedule from daily, 288
//     times]": the log keeps each;
//   - consecutive parts of one model response (chat responses of any variant
//     and tool call requests) form one assistant message, with the
//     citations of its text (their ranges moved to the message's text) and
//     the hosted activities of the response (those logged just before its
//     parts, or among them), each TextAt moved likewise; model usage and
//     chat responses addressed to the user only are not sent; none of
//     these splits the message, any other event does;
//   - a tool result is a tool message with the blocks addressed to the
//     assistant, or [PlaceholderSuccess] / [PlaceholderFailure] when none is;
//   - a validation correction is a system message, unless it reached the
//     model as a tool call's result (CallID set);
//   - the results of an assistant message's calls follow it: what came
//     between (the messages drained while calls waited for a person's
//     approval) is sent after the last of them;
//   - a head's events (Event.Aside) are neither sent nor split a message;
//   - nothing else is sent (turn starts, state changes, system notices,
//     presentations, approval decisions, which their calls' results carry,
//     and approval requests, events of unknown types, hosted activities of
//     a response with no part the model is sent).
//
// The messages share block and payload values with events: treat both as
// read-only. Malformed events (no payload) are skipped, never fatal.
func ProviderView(events []Event) []Message {
	msgs := make([]Message, 0, len(events))
	open := false               // msgs' last message is an assistant message still growing
	ticks := 0                  // the inbox messages msgs' last message stands for, when it is one
	var hosted []HostedActivity // of a response whose first part is still to come
	unanswered := 0             // calls of msgs' last assistant message without a result yet
	var held []Message          // what came while calls waited for their results, sent after them
	for i := range events {
		e := &events[i]
		if e.Aside() { // a head's own work: neither sent nor splits a response
			continue
		}
		if e.fromModel() {
			if !open {
				msgs, held, unanswered = append(msgs, held...), held[:0], 0
				msgs = append(msgs, Message{Role: MessageAssistant})
				open = true
			}
			m := &msgs[len(msgs)-1]
			hosted = addHosted(m, hosted)
			addPart(m, e)
			continue
		}
		if e.Type == TypeHostedActivity && e.HostedActivity != nil {
			if hosted = append(hosted, *e.HostedActivity); open {
				hosted = addHosted(&msgs[len(msgs)-1], hosted)
			}
			continue
		}
		if unseen(e) {
			continue
		}
		hosted = hosted[:0] // a response the model is sent nothing of
		if open {
			msgs = dropEmpty(msgs)
			open = false
			if n := len(msgs); n > 0 && msgs[n-1].Role == MessageAssistant {
				unanswered = len(msgs[n-1].ToolCalls)
			}
		}
		to := &msgs
		if unanswered > 0 {
			to = &held
		}
		switch {
		case e.Type == TypeInboxMessage && e.InboxMessage != nil && e.InboxMessage.Kind != KindApproval:
			if i > 0 && repeats(&events[i-1], e) && len(*to) > 0 {
				ticks++
				(*to)[len(*to)-1].Content = []Block{TextBlock(ticksText(e.InboxMessage, ticks))}
				continue
			}
			*to = append(*to, Message{Role: MessageUser, Content: []Block{TextBlock(inboxText(e.InboxMessage))}})
			ticks = 1
		case e.Type == TypeToolCallResponse && e.ToolCallResponse != nil:
			msgs = append(msgs, toolMessage(e.ToolCallResponse))
			if unanswered > 0 {
				if unanswered--; unanswered == 0 {
					msgs, held = append(msgs, held...), held[:0]
				}
			}
		case e.Type == TypeValidationCorrection && e.ValidationCorrection != nil && e.ValidationCorrection.CallID == "":
			*to = append(*to, Message{Role: MessageSystem, Content: []Block{TextBlock(e.ValidationCorrection.Text)}})
		}
	}
	if open {
		msgs = dropEmpty(msgs)
	}
	return append(msgs, held...)
}

// waiting reports whether view ends with an assistant message some of whose
// calls have no result yet (they wait for approval): what comes next is
// held back until they have one (see ProviderView).
func waiting(view []Message) bool {
	results := 0
	for i := len(view) - 1; i >= 0; i-- {
		switch view[i].Role {
		case MessageTool:
			results++
		case MessageAssistant:
			return results < len(view[i].ToolCalls)
		default:
			return false
		}
	}
	return false
}

// unseen reports whether e, not a part of a model response, is neither
// sent nor splits one: a hosted activity happens inside a model response,
// its usage describes it, a chat response that is not part of one is
// addressed to the user only, and a head's event is the engine's.
func unseen(e *Event) bool {
	return e.Type == TypeHostedActivity || e.Type == TypeChatResponse || e.Type == TypeModelUsage || e.Aside()
}

// ProviderViewAppend appends the provider view of events to view, the
// view of the log they continue (ProviderView of it), as append does, and
// returns the view of the whole log, at the cost of events alone. That
// holds when events start with an event that ends any model response in
// progress, as a turn start does, or when view does not end with a model
// response (as a round's view does: the next starts with the model's
// answer); ok is false otherwise (view is then returned as it is), and the
// caller must view the whole log.
func ProviderViewAppend(view []Message, events []Event) (msgs []Message, ok bool) {
	if len(events) > 0 && (events[0].fromModel() || unseen(&events[0])) &&
		len(view) > 0 && view[len(view)-1].Role == MessageAssistant || waiting(view) {
		return view, false
	}
	return append(view, ProviderView(events)...), true
}

// addPart adds the model response part e to the assistant message m.
func addPart(m *Message, e *Event) {
	if r := e.ToolCallRequest; r != nil {
		args := r.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: r.CallID, Name: r.Name, Arguments: args, Payload: r.Payload})
		return
	}
	c := e.ChatResponse
	switch c.Variant {
	case VariantReasoning:
		m.Reasoning = append(m.Reasoning, Reasoning{Text: c.Text, Signature: c.Signature, Payload: c.Payload})
	case VariantStructured:
		if len(c.Structured) > 0 {
			m.Content = append(m.Content, Block{Type: BlockText, Text: string(c.Structured), MimeType: "application/json"})
		}
	default: // message, and variants of newer versions: their text is the answer
		if c.Text == "" {
			break
		}
		at := textEnd(m)
		m.Content = append(m.Content, TextBlock(c.Text))
		for _, ct := range c.Citations {
			if ct.Range != nil {
				moved := Range{Start: ct.Range.Start + at, End: ct.Range.End + at}
				ct.Range = &moved
			}
			m.Citations = append(m.Citations, ct)
		}
	}
}

// addHosted adds the hosted activities of a response to m, the assistant
// message the response's parts go to, their places moved to m's text; it
// returns hosted emptied, for reuse.
func addHosted(m *Message, hosted []HostedActivity) []HostedActivity {
	if len(hosted) == 0 {
		return hosted
	}
	at := textEnd(m)
	for _, h := range hosted {
		h.TextAt += at
		m.Hosted = append(m.Hosted, h)
	}
	return hosted[:0]
}

// textEnd is where the text of a response added to m starts in m.Text():
// after m's text and the line break TextOf puts between two blocks. It
// counts what TextOf would join rather than joining it: every text part of
// a response is placed this way, and the view is built every turn.
func textEnd(m *Message) int {
	n := 0
	for i := range m.Content {
		if t := m.Content[i].text(); t != "" {
			n += len(t) + 1 // TextOf's line break after it, or textEnd's
		}
	}
	return n
}

// dropEmpty removes msgs' last message when it is an assistant message with
// nothing in it (a response of only empty text): providers refuse those.
func dropEmpty(msgs []Message) []Message {
	m := &msgs[len(msgs)-1]
	if len(m.Content) == 0 && len(m.Reasoning) == 0 && len(m.ToolCalls) == 0 {
		return msgs[:len(msgs)-1]
	}
	return msgs
}

// repeats reports whether e is a schedule message that repeats prev, the
// event right before it: the same timer's tick in the same drain.
func repeats(prev, e *Event) bool {
	p, m := prev.InboxMessage, e.InboxMessage
	return prev.Type == TypeInboxMessage && p != nil && m.Kind == KindSchedule &&
		p.Kind == m.Kind && p.From == m.From && p.Content == m.Content
}

// ticksText is n schedule messages like m as the model reads them.
func ticksText(m *InboxMessage, n int) string {
	header := string(m.Kind)
	if m.From != "" {
		header += " from " + m.From
	}
	return fmt.Sprintf("[%s, %d times]\n%s", header, n, m.Content)
}

// inboxText is an inbox message as the model reads it: a user's words
// as they are, anything else under a header naming its source.
func inboxText(m *InboxMessage) string {
	var header string
	switch m.Kind {
	case KindUser:
		if m.DuringTurn {
			return "[user message, " + duringTurn + "]\n" + m.Content
		}
		return m.Content
	case KindOperator:
		header = "operator message"
	case KindSystem:
		return "[system]\n" + m.Content
	default: // process_event, schedule, and kinds of newer versions
		header = string(m.Kind)
	}
	if m.From != "" {
		header += " from " + m.From
	}
	if m.DuringTurn {
		header += ", " + duringTurn
	}
	return "[" + header + "]\n" + m.Content
}

// duringTurn is how the model is told that a message reached it while it
// was working: it may change what the model was doing.
const duringTurn = "sent while you were working: take it into account before you go on"

// toolMessage is a tool result as the model reads it.
func toolMessage(r *ToolCallResponse) Message {
	content := AddressedTo(r.Content, RoleAssistant)
	if len(content) == 0 {
		text := PlaceholderSuccess
		if r.IsError {
			text = PlaceholderFailure
		}
		content = []Block{TextBlock(text)}
	}
	return Message{Role: MessageTool, Content: content, ToolCallID: r.CallID, ToolName: r.Name, IsError: r.IsError}
}
