package tools

import "time"

// Approval is a recipe's rule that a tool's calls wait for a person's
// decision before they run (the tool entry's approval).
type Approval struct {
	// By is who decides: conversation.ApproverUser or ApproverOperator (an
	// operator may always decide).
	By string
	// Timeout is how long a call waits for the decision before it is
	// rejected; 0 waits without end.
	Timeout time.Duration
}

// Approval returns the approval the calls of the tool called name wait for;
// ok is false when they run at once.
func (r *Registry) Approval(name string) (a Approval, ok bool) {
	if r == nil {
		return Approval{}, false
	}
	a, ok = r.approvals[name]
	return a, ok
}
