package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
)

var (
	// ErrUnknownType reports an event whose type this version does not
	// know. It is not corruption: a reader skips such events.
	ErrUnknownType = errors.New("conversation: unknown event type")
	// ErrInvalid reports an event that breaks the rules of its type.
	ErrInvalid = errors.New("conversation: invalid event")
)

// Validate checks that e has a known type, carries exactly the payload of
// that type, and that the payload's required fields are set. Errors wrap
// [ErrUnknownType] or [ErrInvalid] and name the event and the field.
// Writers validate before appending; readers must not treat a failure as
// fatal.
func (e *Event) Validate() error {
	if !e.Type.Known() {
		if e.Type == "" {
			return fmt.Errorf("%w: %s: type is missing", ErrInvalid, e.label())
		}
		return fmt.Errorf("%w: %s: type %q is not known to this version", ErrUnknownType, e.label(), e.Type)
	}
	var present []EventType
	for t, set := range e.payloads() {
		if set {
			present = append(present, t)
		}
	}
	switch {
	case len(present) == 0:
		return fmt.Errorf("%w: %s: payload %q is missing", ErrInvalid, e.label(), e.Type)
	case len(present) > 1 || present[0] != e.Type:
		return fmt.Errorf("%w: %s: has payloads %q; only %q is allowed", ErrInvalid, e.label(), present, e.Type)
	}
	if err := e.validatePayload(); err != nil {
		return fmt.Errorf("%w: %s: %s.%w", ErrInvalid, e.label(), e.Type, err)
	}
	return nil
}

// label names e in errors.
func (e *Event) label() string {
	if e.ID == "" {
		return "event (no id)"
	}
	return "event " + e.ID
}

// payloads yields every payload field's type and whether it is set, in
// declaration order.
func (e *Event) payloads() iter.Seq2[EventType, bool] {
	return func(yield func(EventType, bool) bool) {
		_ = yield(TypeTurnStart, e.TurnStart != nil) &&
			yield(TypeInboxMessage, e.InboxMessage != nil) &&
			yield(TypeChatResponse, e.ChatResponse != nil) &&
			yield(TypeToolCallRequest, e.ToolCallRequest != nil) &&
			yield(TypeToolCallResponse, e.ToolCallResponse != nil) &&
			yield(TypeValidationCorrection, e.ValidationCorrection != nil) &&
			yield(TypeStateChange, e.StateChange != nil) &&
			yield(TypeSystemNotice, e.SystemNotice != nil) &&
			yield(TypeHostedActivity, e.HostedActivity != nil) &&
			yield(TypePresentation, e.Presentation != nil) &&
			yield(TypeModelUsage, e.ModelUsage != nil) &&
			yield(TypeApprovalRequested, e.ApprovalRequested != nil) &&
			yield(TypeApprovalDecided, e.ApprovalDecided != nil) &&
			yield(TypePhaseChange, e.PhaseChange != nil)
	}
}

// fieldError is a payload field that breaks a rule; it renders as
// "field: problem".
type fieldError struct{ field, problem string }

func (f *fieldError) Error() string { return f.field + ": " + f.problem }

func required(field, value string) error {
	if value == "" {
		return &fieldError{field, "must not be empty"}
	}
	return nil
}

func validJSON(field string, raw json.RawMessage, need bool) error {
	switch {
	case len(raw) == 0 && need:
		return &fieldError{field, "must not be empty"}
	case len(raw) > 0 && !json.Valid(raw):
		return &fieldError{field, "is not valid JSON"}
	}
	return nil
}

func validPayload(field string, p *ProviderPayload) error {
	if p == nil {
		return nil
	}
	return first(
		required(field+".provider", p.Provider),
		required(field+".format", p.Format),
		validJSON(field+".value", p.Value, false),
	)
}

// first returns the first non-nil error: fixing it reveals the next.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// validatePayload checks the payload named by e.Type, which is set.
func (e *Event) validatePayload() error {
	var errs []error
	switch e.Type {
	case TypeTurnStart:
	case TypeInboxMessage:
		m := e.InboxMessage
		errs = append(errs, required("message_id", m.MessageID))
		if !m.Kind.Known() {
			errs = append(errs, &fieldError{"kind", fmt.Sprintf("%q is not one of user, operator, process_event, schedule, system", m.Kind)})
		}
	case TypeChatResponse:
		c := e.ChatResponse
		if !c.Variant.Known() {
			errs = append(errs, &fieldError{"variant", fmt.Sprintf("%q is not one of message, structured, reasoning", c.Variant)})
		}
		errs = append(errs,
			validJSON("structured", c.Structured, c.Variant == VariantStructured),
			validPayload("payload", c.Payload))
		for i, ct := range c.Citations {
			errs = append(errs, validPayload(fmt.Sprintf("citations[%d].replay", i), ct.Replay))
		}
	case TypeToolCallRequest:
		r := e.ToolCallRequest
		errs = append(errs,
			required("call_id", r.CallID),
			required("name", r.Name),
			validJSON("arguments", r.Arguments, false),
			validPayload("payload", r.Payload))
	case TypeToolCallResponse:
		r := e.ToolCallResponse
		errs = append(errs, required("call_id", r.CallID), required("name", r.Name))
		for i, b := range r.Content {
			errs = append(errs, validBlock(fmt.Sprintf("content[%d]", i), b))
		}
		for i, ct := range r.Citations {
			errs = append(errs, validPayload(fmt.Sprintf("citations[%d].replay", i), ct.Replay))
		}
	case TypeValidationCorrection:
		v := e.ValidationCorrection
		errs = append(errs, required("validator", v.Validator), required("text", v.Text))
		if v.Attempt < 1 {
			errs = append(errs, &fieldError{"attempt", fmt.Sprintf("must be at least 1 (got %d)", v.Attempt)})
		}
	case TypeStateChange:
		s := e.StateChange
		errs = append(errs, required("to", s.To), required("event", s.Event))
	case TypeSystemNotice:
		errs = append(errs, required("code", e.SystemNotice.Code))
	case TypePhaseChange:
		p := e.PhaseChange
		errs = append(errs, required("reason", p.Reason), validJSON("result", p.Result, false))
		if p.From == "" && p.To == "" {
			errs = append(errs, &fieldError{"to", "must not be empty when from is"})
		}
	case TypeHostedActivity:
		h := e.HostedActivity
		errs = append(errs, required("activity_id", h.ActivityID), required("name", h.Name))
		if !h.State.Known() {
			errs = append(errs, &fieldError{"state", fmt.Sprintf("%q is not one of started, completed, failed", h.State)})
		}
		errs = append(errs, validJSON("input", h.Input, false), validPayload("payload", h.Payload))
		if h.TextAt < 0 {
			errs = append(errs, &fieldError{"text_at", fmt.Sprintf("must not be negative (got %d)", h.TextAt)})
		}
	case TypePresentation:
		p := e.Presentation
		errs = append(errs, required("summary", p.Summary), validJSON("blocks", p.Blocks, false))
	case TypeModelUsage:
		if u := e.ModelUsage; u.InputTokens < 0 || u.OutputTokens < 0 {
			errs = append(errs, &fieldError{"input_tokens", fmt.Sprintf("counts must not be negative (got %d in, %d out)", u.InputTokens, u.OutputTokens)})
		}
	case TypeApprovalRequested:
		calls := e.ApprovalRequested.Calls
		if len(calls) == 0 {
			errs = append(errs, &fieldError{"calls", "must not be empty"})
		}
		for i, c := range calls {
			f := fmt.Sprintf("calls[%d].", i)
			errs = append(errs, required(f+"call_id", c.CallID), required(f+"name", c.Name), required(f+"key", c.Key),
				validJSON(f+"arguments", c.Arguments, false))
			if c.By != ApproverUser && c.By != ApproverOperator {
				errs = append(errs, &fieldError{f + "by", fmt.Sprintf("%q is not one of user, operator", c.By)})
			}
		}
	case TypeApprovalDecided:
		d := e.ApprovalDecided
		errs = append(errs, required("call_id", d.CallID))
		if !d.Decision.Known() {
			errs = append(errs, &fieldError{"decision", fmt.Sprintf("%q is not one of approve, reject", d.Decision)})
		}
	}
	return first(errs...)
}

// validBlock checks what the views rely on: a type, and an audience of
// known roles (a misspelt role would hide the block from both views).
func validBlock(field string, b Block) error {
	if b.Type == "" {
		return &fieldError{field + ".type", "must not be empty"}
	}
	if b.Annotations == nil {
		return nil
	}
	for i, r := range b.Annotations.Audience {
		if r != RoleUser && r != RoleAssistant {
			return &fieldError{fmt.Sprintf("%s.annotations.audience[%d]", field, i), fmt.Sprintf("%q is not one of user, assistant", r)}
		}
	}
	return nil
}
