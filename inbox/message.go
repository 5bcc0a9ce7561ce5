package inbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
)

// Message is a message to a process: what its inbox holds until a turn
// drains it into the conversation log.
type Message struct {
	// ID is the message's id in its inbox, set by Post.
	ID   string
	Kind conversation.Kind
	// From names the sender ("user:alice", "operator:bob", a child's id,
	// "timer:daily"). It becomes the By of the events the message causes;
	// when empty, the kind stands in (Sender).
	From, Content string
	// At is when the message was sent (millisecond precision); Post stamps
	// it with the clock when zero.
	At time.Time
	// IdempotencyKey, when set, makes a repeated Post return the first
	// message's id instead of adding a copy. It is not stored with the
	// message.
	IdempotencyKey string
	// TraceParent is the W3C traceparent of the span that posted the
	// message (an API request, a spawn_worker call), or "": the span of
	// the turn that drains it links to it, whichever node runs the turn.
	TraceParent string
}

// maxTraceParent bounds TraceParent: a version 00 traceparent has 55
// bytes, and later versions may only append to it.
const maxTraceParent = 256

// Validate reports whether m can be posted: its kind must be one of
// conversation's, and an approval must carry a decision (Decision).
func (m Message) Validate() error {
	if !m.Kind.Known() {
		return fmt.Errorf("kind %q: want one of user, operator, process_event, schedule, system, approval", m.Kind)
	}
	if len(m.TraceParent) > maxTraceParent {
		return fmt.Errorf("trace parent: %d bytes, more than %d", len(m.TraceParent), maxTraceParent)
	}
	if m.Kind == conversation.KindApproval {
		if _, ok := m.Decision(); !ok {
			return fmt.Errorf(`an approval's content must be {"call_id": "...", "decision": "approve"|"reject", "reason": "..."} (got %q)`, m.Content)
		}
	}
	return nil
}

// Decision returns the decision an approval message carries.
func (m Message) Decision() (conversation.ApprovalDecision, bool) {
	return (&conversation.InboxMessage{Kind: m.Kind, Content: m.Content}).Approval()
}

// Decider is who decides the approval m carries: "user" when a user sent
// it ("user" or "user:<name>"), else "operator" (operators, admins and the
// system, which may decide any call).
func (m Message) Decider() string {
	if m.From == "user" || strings.HasPrefix(m.From, "user:") {
		return conversation.ApproverUser
	}
	return conversation.ApproverOperator
}

// Approval makes the message of a decision on call callID of a process,
// sent by from ("operator:bob", "user:ada", "timeout"): who decides is
// read from it (Decider).
func Approval(d conversation.ApprovalDecision, from string) Message {
	b, _ := json.Marshal(d)
	return Message{Kind: conversation.KindApproval, From: from, Content: string(b)}
}

// Sender names who sent m: its From, else its kind. It is the By of the
// events m causes: the user_input that m unblocks a process with, the
// inbox_message a turn drains it into.
func (m Message) Sender() string {
	if m.From != "" {
		return m.From
	}
	return string(m.Kind)
}
