package conversation

import (
	"encoding/json"
	"time"
)

// KindApproval is the inbox message kind of a person's decision on a tool
// call waiting for approval; its content is an [ApprovalDecision] as JSON.
const KindApproval Kind = "approval"

// Decision is a person's answer to a tool call waiting for approval.
type Decision string

// Decisions.
const (
	Approve Decision = "approve"
	Reject  Decision = "reject"
)

// Known reports whether d is one of the decisions above.
func (d Decision) Known() bool { return d == Approve || d == Reject }

// Approvers: who may decide a call (the recipe's approval.by). An operator
// may always decide.
const (
	ApproverUser     = "user"
	ApproverOperator = "operator"
)

// PendingCall is a tool call that waits for a person's decision before it
// runs.
type PendingCall struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Arguments are the call's arguments, as the approver sees them.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// By is who may decide: ApproverUser or ApproverOperator.
	By string `json:"by"`
	// Key is the call key the tool runs under once approved (the key of
	// the turn that asked for it), so that a run repeated after a node's
	// crash finds what the first run did.
	Key string `json:"key"`
	// Requested is when the call was asked for.
	Requested time.Time `json:"requested_at"`
	// Deadline, when set, is when the call is rejected if nobody decided.
	Deadline *time.Time `json:"deadline,omitempty"`
}

// ApprovalRequested records the tool calls of a round that wait for a
// person's decision: the process is BLOCKED until each is decided.
type ApprovalRequested struct {
	Calls []PendingCall `json:"calls"`
}

// ApprovalDecision is a person's decision on a pending call: the content of
// an approval inbox message, and, once the turn applies it, of an
// approval_decided event (whose By says who decided).
type ApprovalDecision struct {
	CallID   string   `json:"call_id"`
	Decision Decision `json:"decision"`
	Reason   string   `json:"reason,omitempty"`
}

// Approval returns the decision m carries, when m is an approval message.
func (m *InboxMessage) Approval() (ApprovalDecision, bool) {
	var d ApprovalDecision
	if m.Kind != KindApproval || json.Unmarshal([]byte(m.Content), &d) != nil || d.CallID == "" || !d.Decision.Known() {
		return ApprovalDecision{}, false
	}
	return d, true
}

// NewApprovalRequested returns an approval_requested event for calls.
func NewApprovalRequested(calls []PendingCall) Event {
	return Event{Type: TypeApprovalRequested, ApprovalRequested: &ApprovalRequested{Calls: calls}}
}

// NewApprovalDecided returns an approval_decided event for d.
func NewApprovalDecided(d ApprovalDecision) Event {
	return Event{Type: TypeApprovalDecided, ApprovalDecided: &d}
}
