package conversation

import (
	"encoding/json"
	"strings"
	"time"
)

// EventType names the kind of an event; it is also the JSON key of the
// event's payload.
type EventType string

// Event types.
const (
	TypeTurnStart            EventType = "turn_start"
	TypeInboxMessage         EventType = "inbox_message"
	TypeChatResponse         EventType = "chat_response"
	TypeToolCallRequest      EventType = "tool_call_request"
	TypeToolCallResponse     EventType = "tool_call_response"
	TypeValidationCorrection EventType = "validation_correction"
	TypeStateChange          EventType = "state_change"
	TypeSystemNotice         EventType = "system_notice"
	TypeHostedActivity       EventType = "hosted_activity"
	TypePresentation         EventType = "presentation"
	TypeModelUsage           EventType = "model_usage"
	TypeApprovalRequested    EventType = "approval_requested"
	TypeApprovalDecided      EventType = "approval_decided"
	TypePhaseChange          EventType = "phase_change"
)

// Known reports whether t is one of the types above. Events of unknown
// types (written by a newer node) decode without error; readers skip them.
func (t EventType) Known() bool {
	switch t {
	case TypeTurnStart, TypeInboxMessage, TypeChatResponse, TypeToolCallRequest,
		TypeToolCallResponse, TypeValidationCorrection, TypeStateChange,
		TypeSystemNotice, TypeHostedActivity, TypePresentation, TypeModelUsage,
		TypeApprovalRequested, TypeApprovalDecided, TypePhaseChange:
		return true
	}
	return false
}

// Event is one record of a process's conversation log: common fields and
// exactly one payload, the one named by Type (a tagged union). Its JSON is
// {"id", "type", "at", "turn", "by", "<type>": {...}}.
//
// The constructors (NewToolCallResponse and the like) set Type and the
// payload; the code that appends to the log stamps At, Turn and By. Storage
// assigns ID.
type Event struct {
	ID   string    `json:"id,omitempty"`
	Type EventType `json:"type"`
	At   time.Time `json:"at"`
	// Turn is the id of the turn the event belongs to.
	Turn string `json:"turn,omitempty"`
	// By says who caused the event: "user:alice", "model", "node:n1",
	// "operator:bob", "system".
	By string `json:"by,omitempty"`

	TurnStart            *TurnStart            `json:"turn_start,omitempty"`
	InboxMessage         *InboxMessage         `json:"inbox_message,omitempty"`
	ChatResponse         *ChatResponse         `json:"chat_response,omitempty"`
	ToolCallRequest      *ToolCallRequest      `json:"tool_call_request,omitempty"`
	ToolCallResponse     *ToolCallResponse     `json:"tool_call_response,omitempty"`
	ValidationCorrection *ValidationCorrection `json:"validation_correction,omitempty"`
	StateChange          *StateChange          `json:"state_change,omitempty"`
	SystemNotice         *SystemNotice         `json:"system_notice,omitempty"`
	HostedActivity       *HostedActivity       `json:"hosted_activity,omitempty"`
	Presentation         *Presentation         `json:"presentation,omitempty"`
	ModelUsage           *ModelUsage           `json:"model_usage,omitempty"`
	ApprovalRequested    *ApprovalRequested    `json:"approval_requested,omitempty"`
	ApprovalDecided      *ApprovalDecision     `json:"approval_decided,omitempty"`
	PhaseChange          *PhaseChange          `json:"phase_change,omitempty"`
}

// ByHead begins the By of the events a head of a turn logs, "head:NAME"
// (the heads of a zaphod turn, engines/zaphod): what a head did beside the
// conversation, its tool calls and their results, its model usage, its
// answer for the engine alone. Neither ProviderView nor UserView shows them;
// the log keeps them (the raw view, the API), and TokensUsed counts them.
const ByHead = "head:"

// Aside reports whether e is a head's event (ByHead).
func (e *Event) Aside() bool { return strings.HasPrefix(e.By, ByHead) }

// fromModel reports whether e is part of a model response: the events that
// ProviderView merges into one assistant message.
func (e *Event) fromModel() bool {
	switch e.Type {
	case TypeChatResponse:
		return e.ChatResponse != nil && e.ChatResponse.AddressedTo(RoleAssistant)
	case TypeToolCallRequest:
		return e.ToolCallRequest != nil
	}
	return false
}

// NewTurnStart returns a turn_start event; reason may be empty.
func NewTurnStart(reason string) Event {
	return Event{Type: TypeTurnStart, TurnStart: &TurnStart{Reason: reason}}
}

// NewInboxMessage returns the inbox_message event of a drained message.
func NewInboxMessage(messageID string, kind Kind, from, content string) Event {
	return Event{Type: TypeInboxMessage, InboxMessage: &InboxMessage{
		MessageID: messageID, Kind: kind, From: from, Content: content,
	}}
}

// NewChatMessage returns a chat_response event of the message variant.
func NewChatMessage(text string, citations ...Citation) Event {
	return Event{Type: TypeChatResponse, ChatResponse: &ChatResponse{
		Variant: VariantMessage, Text: text, Citations: citations,
	}}
}

// NewStructured returns a chat_response event of the structured variant.
func NewStructured(value json.RawMessage) Event {
	return Event{Type: TypeChatResponse, ChatResponse: &ChatResponse{
		Variant: VariantStructured, Structured: value,
	}}
}

// NewReasoning returns a chat_response event of the reasoning variant;
// signature and payload are what the provider needs to accept it back.
func NewReasoning(text, signature string, payload *ProviderPayload) Event {
	return Event{Type: TypeChatResponse, ChatResponse: &ChatResponse{
		Variant: VariantReasoning, Text: text, Signature: signature, Payload: payload,
	}}
}

// NewToolCallRequest returns a tool_call_request event.
//
// Arguments that are not valid JSON (a model's broken output) are kept as a
// JSON string holding the raw text, so that the event still encodes and
// nothing the model sent is lost.
func NewToolCallRequest(callID, name string, arguments json.RawMessage) Event {
	if len(arguments) > 0 && !json.Valid(arguments) {
		arguments, _ = json.Marshal(string(arguments)) // a string always encodes
	}
	return Event{Type: TypeToolCallRequest, ToolCallRequest: &ToolCallRequest{
		CallID: callID, Name: name, Arguments: arguments,
	}}
}

// NewToolCallResponse returns a tool_call_response event.
func NewToolCallResponse(callID, name string, content []Block, isError bool) Event {
	return Event{Type: TypeToolCallResponse, ToolCallResponse: &ToolCallResponse{
		CallID: callID, Name: name, Content: content, IsError: isError,
	}}
}

// NewValidationCorrection returns a validation_correction event.
func NewValidationCorrection(validator string, attempt int, text string) Event {
	return Event{Type: TypeValidationCorrection, ValidationCorrection: &ValidationCorrection{
		Validator: validator, Attempt: attempt, Text: text,
	}}
}

// NewPhaseChange returns a phase_change event: a phased process (the vogon
// engine's) moves to phase to, for reason; from and result are the phase it
// leaves and, when that phase passed its gate, its result.
func NewPhaseChange(from, to, reason string, result json.RawMessage) Event {
	return Event{Type: TypePhaseChange, PhaseChange: &PhaseChange{From: from, To: to, Reason: reason, Result: result}}
}

// NewStateChange returns a state_change event for the lifecycle event that
// moved the process from one state to another.
func NewStateChange(from, to, event string) Event {
	return Event{Type: TypeStateChange, StateChange: &StateChange{From: from, To: to, Event: event}}
}

// NewSystemNotice returns a system_notice event.
func NewSystemNotice(code, text string) Event {
	return Event{Type: TypeSystemNotice, SystemNotice: &SystemNotice{Code: code, Text: text}}
}

// NewHostedActivity returns a hosted_activity event of one state of h.
func NewHostedActivity(h HostedActivity) Event {
	return Event{Type: TypeHostedActivity, HostedActivity: &h}
}

// NewModelUsage returns a model_usage event.
func NewModelUsage(u ModelUsage) Event {
	return Event{Type: TypeModelUsage, ModelUsage: &u}
}

// TokensUsed sums the input and output tokens the model_usage events among
// events report.
func TokensUsed(events []Event) (input, output int64) {
	for _, e := range events {
		if u := e.ModelUsage; u != nil {
			input += int64(u.InputTokens)
			output += int64(u.OutputTokens)
		}
	}
	return input, output
}
