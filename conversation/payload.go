package conversation

import (
	"encoding/json"
	"slices"
)

// TurnStart opens a turn.
type TurnStart struct {
	// Reason says what triggered the turn (optional), e.g. "wake",
	// "recover", "schedule".
	Reason string `json:"reason,omitempty"`
}

// Kind is the kind of an inbox message: who or what sent it.
type Kind string

// Inbox message kinds.
const (
	KindUser         Kind = "user"
	KindOperator     Kind = "operator"
	KindProcessEvent Kind = "process_event"
	KindSchedule     Kind = "schedule"
	KindSystem       Kind = "system"
)

// Known reports whether k is one of the kinds above.
func (k Kind) Known() bool {
	switch k {
	case KindUser, KindOperator, KindProcessEvent, KindSchedule, KindSystem, KindApproval:
		return true
	}
	return false
}

// InboxMessage is an inbox message drained into the conversation.
type InboxMessage struct {
	// MessageID is the id the message had in the inbox.
	MessageID string `json:"message_id"`
	Kind      Kind   `json:"kind"`
	// From names the sender: a user, an operator, a child process, a
	// schedule (optional).
	From    string `json:"from,omitempty"`
	Content string `json:"content"`
	// DuringTurn says the message reached the turn while it ran (drained
	// between two of its rounds), not before it: the model is told so.
	DuringTurn bool `json:"during_turn,omitempty"`
}

// ProcessEvent is the content of a process_event inbox message, as JSON:
// what a finished worker reports to its parent.
type ProcessEvent struct {
	Child  string `json:"child"`
	Recipe string `json:"recipe"`
	// Status is the worker's finish_task status (done or failed), or
	// ReportDeleted.
	Status string `json:"status"`
	Result string `json:"result"`
	// Sources are the sources the worker's result cites.
	Sources []Source `json:"sources,omitempty"`
	// Data is the result parsed as JSON, when the worker's recipe has a
	// result_schema and the result matched it (reports of older versions
	// have none).
	Data json.RawMessage `json:"data,omitempty"`
}

// ReportDeleted is the status of the report a worker deleted before it
// finished sends its parent.
const ReportDeleted = "deleted"

// ProcessEvent returns the report m carries, when m is a worker's report.
func (m *InboxMessage) ProcessEvent() (ProcessEvent, bool) {
	var pe ProcessEvent
	if m.Kind != KindProcessEvent || json.Unmarshal([]byte(m.Content), &pe) != nil || pe.Child == "" {
		return ProcessEvent{}, false
	}
	return pe, true
}

// Variant is the kind of a chat response part.
type Variant string

// Chat response variants.
const (
	// VariantMessage is free text of the model.
	VariantMessage Variant = "message"
	// VariantStructured is a structured (JSON) answer of the model.
	VariantStructured Variant = "structured"
	// VariantReasoning is the model's reasoning, kept for replay to the
	// provider that produced it; people do not see it in the user view.
	VariantReasoning Variant = "reasoning"
)

// Known reports whether v is one of the variants above.
func (v Variant) Known() bool {
	switch v {
	case VariantMessage, VariantStructured, VariantReasoning:
		return true
	}
	return false
}

// ChatResponse is one part of a model response other than a tool call.
type ChatResponse struct {
	Variant Variant `json:"variant"`
	// Text is the message text, or the reasoning text (or summary) a
	// provider returned.
	Text string `json:"text,omitempty"`
	// Structured is the JSON of a structured answer.
	Structured json.RawMessage `json:"structured,omitempty"`
	// Signature is the provider's signature over reasoning, replayed with
	// it.
	Signature string `json:"signature,omitempty"`
	// Payload is opaque provider data to replay (redacted or encrypted
	// reasoning); only the provider that produced it interprets it.
	Payload   *ProviderPayload `json:"payload,omitempty"`
	Citations []Citation       `json:"citations,omitempty"`
	// Audience, when set, limits who the response is for, as on blocks:
	// free text a respond-mode model wrote beside its tools is for the
	// assistant only, and the answer delivered in its stead when the
	// correction budget is spent is for the user only.
	Audience []Role `json:"audience,omitempty"`
}

// AddressedTo reports whether the response is for r: its audience is
// absent or contains r.
func (c *ChatResponse) AddressedTo(r Role) bool {
	return len(c.Audience) == 0 || slices.Contains(c.Audience, r)
}

// ToolCallRequest is a tool call the model asked for.
type ToolCallRequest struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Payload is opaque provider data that must be replayed with the call
	// (Gemini's thought signature, for one).
	Payload *ProviderPayload `json:"payload,omitempty"`
}

// ToolCallResponse is the result of a tool call.
type ToolCallResponse struct {
	CallID  string  `json:"call_id"`
	Name    string  `json:"name"`
	Content []Block `json:"content,omitempty"`
	IsError bool    `json:"is_error,omitempty"`
	// Citations are the sources behind an answer delivered through the
	// tool (respond): those the model's text cited during the turn, without
	// ranges, which addressed that text. The model is not sent them.
	Citations []Citation `json:"citations,omitempty"`
}

// ValidationCorrection is a correction a turn validator sent to the model.
type ValidationCorrection struct {
	Validator string `json:"validator"`
	// Attempt counts the corrections of this turn, from 1.
	Attempt int    `json:"attempt"`
	Text    string `json:"text"`
	// CallID, when set, names the tool call whose error result carried the
	// correction to the model (data_relay refuses a respond call that way);
	// the provider view then does not send the text a second time.
	CallID string `json:"call_id,omitempty"`
}

// StateChange records a lifecycle transition. Who fired it is the event's
// By. The fields are plain strings: lifecycle depends on conversation, not
// the reverse.
type StateChange struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Event string `json:"event"`
}

// The reasons of a phase change.
const (
	PhaseStart  = "start"   // the first phase begins
	PhaseDone   = "done"    // the phase passed its gate; the next begins
	PhaseRetry  = "retry"   // the phase failed its gate and begins again
	PhaseBackTo = "back_to" // the phase failed its gate; an earlier one begins again
	PhaseFailed = "failed"  // the phase failed its gate; the process fails
)

// PhaseChange records that a phased process (the vogon engine's) moved from
// one phase to another. The log is where its phases are kept: the current
// phase is the To of the newest phase change, and a phase's result is the
// Result of the newest change that left it done. To is empty when the last
// phase ended (its result is the process's answer).
type PhaseChange struct {
	From   string          `json:"from,omitempty"`
	To     string          `json:"to,omitempty"`
	Reason string          `json:"reason"`
	Result json.RawMessage `json:"result,omitempty"`
}

// SystemNotice is a notice of the system about the turn, for people and
// operators (e.g. the round bound was reached). The model does not see it.
type SystemNotice struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

// ActivityState is the state of a hosted activity.
type ActivityState string

// Hosted activity states.
const (
	ActivityStarted   ActivityState = "started"
	ActivityCompleted ActivityState = "completed"
	ActivityFailed    ActivityState = "failed"
)

// Known reports whether s is one of the states above.
func (s ActivityState) Known() bool {
	switch s {
	case ActivityStarted, ActivityCompleted, ActivityFailed:
		return true
	}
	return false
}

// HostedActivity records a state of work a provider ran on its side (web
// search, code execution). Each state is a new event; none is rewritten.
type HostedActivity struct {
	ActivityID string           `json:"activity_id"`
	Name       string           `json:"name"`
	State      ActivityState    `json:"state"`
	Input      json.RawMessage  `json:"input,omitempty"`
	Summary    string           `json:"summary,omitempty"`
	Payload    *ProviderPayload `json:"payload,omitempty"`
	// TextAt is how many bytes of its model response's text (the text
	// deltas joined) came before this state: where the activity sits in the
	// answer, so that the provider that ran it can be sent it back in its
	// place.
	TextAt int `json:"text_at,omitempty"`
}

// ModelUsage counts the tokens of one model call (a round). Provider-hosted
// usage (web searches) is not stored: it is a metric, and every hosted
// activity is an event of its own.
type ModelUsage struct {
	// Provider is the configured provider that answered (with fallbacks,
	// the one that did); empty when not known.
	Provider string `json:"provider,omitempty"`
	// Model is the model name the provider was asked for; empty for its
	// default.
	Model        string `json:"model,omitempty"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
	// ClearedResults and DroppedMessages say what the call was not shown
	// of a conversation longer than the recipe's limits.max_context_tokens
	// (see Fit).
	ClearedResults  int `json:"cleared_results,omitempty"`
	DroppedMessages int `json:"dropped_messages,omitempty"`
}

// Presentation is the user-addressed result of present_results.
type Presentation struct {
	// CallID is the present_results call that produced it.
	CallID  string `json:"call_id"`
	Summary string `json:"summary"`
	// Blocks are the presentation blocks (metrics, table, chart, links,
	// actions), carried as JSON; their kinds are defined by the tool.
	Blocks json.RawMessage `json:"blocks,omitempty"`
	// Markdown is the server-built GFM fallback.
	Markdown string `json:"markdown,omitempty"`
}

// ProviderPayload is provider data carried unchanged through the log. Only
// the adapter of Provider interprets Value; unknown versions round-trip.
type ProviderPayload struct {
	Provider string          `json:"provider"`
	Format   string          `json:"format"`
	Version  string          `json:"version,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
}

// Citation is a source a model answer cites.
type Citation struct {
	Source  Source `json:"source"`
	Excerpt string `json:"excerpt,omitempty"`
	// Range is the cited span of the answer's text, in bytes.
	Range *Range `json:"range,omitempty"`
	// Replay is provider data needed to send the citation back.
	Replay *ProviderPayload `json:"replay,omitempty"`
	// Incomplete marks a citation kept from a partially streamed answer.
	Incomplete bool `json:"incomplete,omitempty"`
}

// Source identifies a cited document.
type Source struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// Range is a half-open span [Start, End).
type Range struct {
	Start int `json:"start"`
	End   int `json:"end"`
}
