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

// KeepApprovals gives sub, a registry built from some of r's tools (an
// engine's narrower pool, as a vogon phase's), the approvals r has for
// them, so that narrowing a pool never lets a gated call run at once.
func (r *Registry) KeepApprovals(sub *Registry) {
	for _, d := range sub.Definitions() {
		if a, ok := r.Approval(d.Name); ok {
			if sub.approvals == nil {
				sub.approvals = make(map[string]Approval)
			}
			sub.approvals[d.Name] = a
		}
	}
}
