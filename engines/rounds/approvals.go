package rounds

import (
	"context"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
)

// A tool whose calls need a person's approval (tools.Registry.Approval)
// does not run in the round that asks for it: the round's other calls run,
// an approval_requested event lists the waiting ones, and the turn ends
// with them (Outcome.Approvals), the process BLOCKED until they are
// decided. The turn a decision wakes applies the decisions it drained, each
// once: an approval_decided event, made durable, then the tool's run (under
// the call key of the turn that asked, so that an idempotent tool repeated
// after a crash finds its first run) or, for a rejection, an error result
// with the reason. The model is called again once no call waits. A
// contract's ending call may wait too (Ending.Await): its decision, made
// durable the same way, goes to the contract (Decider), which may end the
// turn there.

// pending is call c, the turn's n-th request, as a call that waits for
// approval a.
func (r *run) pending(c conversation.ToolCall, n int, a tools.Approval) conversation.PendingCall {
	p := conversation.PendingCall{CallID: c.ID, Name: c.Name, Arguments: c.Arguments, By: a.By, Key: r.callKey(n), Requested: r.now()}
	if a.Timeout > 0 {
		deadline := r.now().Add(a.Timeout)
		p.Deadline = &deadline
	}
	return p
}

// await makes calls the ones the turn ends waiting for, logging them
// unless the turn did already (a resumed turn).
func (r *run) await(calls []conversation.PendingCall) {
	for _, e := range r.turn {
		if e.ApprovalRequested != nil {
			r.approvals = calls
			return
		}
	}
	r.add(byEngine, conversation.NewApprovalRequested(calls))
	r.approvals = calls
}

// decision is a decision on a call as the turn drained it, and who made it.
type decision struct {
	conversation.ApprovalDecision
	by string
}

// settle applies the decisions this turn drained on the calls the process
// waits for (Turn.Approvals), in the calls' order, and keeps waiting for
// those without one. A call whose decision a stopped node applied but
// whose result it did not save is an orphan, as in resume: an approved
// idempotent tool runs again under its key, any other may or may not have
// run, which the model is told.
func (r *run) settle(ctx, toolCtx context.Context) {
	decided := map[string]decision{}
	applied, answered := map[string]bool{}, map[string]bool{}
	for _, e := range r.t.Current {
		switch {
		case e.InboxMessage != nil:
			if d, ok := e.InboxMessage.Approval(); ok {
				if _, seen := decided[d.CallID]; !seen { // the first decision stands
					decided[d.CallID] = decision{d, e.By}
				}
			}
		case e.ApprovalDecided != nil:
			applied[e.ApprovalDecided.CallID] = true
		case e.ToolCallResponse != nil:
			answered[e.ToolCallResponse.CallID] = true
		}
	}
	var waiting []conversation.PendingCall
	for _, p := range r.t.Approvals {
		d, ok := decided[p.CallID]
		call := conversation.ToolCall{ID: p.CallID, Name: p.Name, Arguments: p.Arguments}
		switch {
		case answered[p.CallID]:
		case !ok:
			waiting = append(waiting, p)
		case p.Name == r.terminal && r.decider != nil:
			if !r.decide(ctx, call, d, applied[p.CallID]) {
				return
			}
		case applied[p.CallID] && d.Decision == conversation.Approve && !r.t.Tools.Idempotent(p.Name):
			r.result(call, tools.ErrorResult("%s", OrphanedCallError))
			r.save(ctx)
		default:
			if !applied[p.CallID] {
				ev := conversation.NewApprovalDecided(d.ApprovalDecision)
				r.add(d.by, ev)
				if !r.save(ctx) {
					return
				}
			}
			if d.Decision == conversation.Approve {
				r.call(toolCtx, call, p.Key)
			} else {
				r.result(call, tools.ErrorResult("%s", rejected(d)))
			}
			r.save(ctx)
		}
		if r.err != nil {
			return
		}
	}
	if len(waiting) > 0 {
		r.approvals = waiting
	}
}

// decide hands decision d on the ending call c to the contract, once the
// decision is durable (applied: a stopped node made it so); the contract
// acting on it again after a crash is harmless, since nothing of its has
// run outside the log. It reports whether settling goes on: false once
// the turn ended (r.ended) or a checkpoint failed.
func (r *run) decide(ctx context.Context, c conversation.ToolCall, d decision, applied bool) bool {
	if !applied {
		r.add(d.by, conversation.NewApprovalDecided(d.ApprovalDecision))
		if !r.save(ctx) {
			return false
		}
	}
	next, done := r.decider.Decided(&Ending{r}, c, d.ApprovalDecision, d.by)
	if done {
		r.ended = &next
		return false
	}
	return r.save(ctx)
}

// rejected is the result the model gets for a call a person rejected.
func rejected(d decision) string {
	text := "This call was not run: " + d.by + " rejected it"
	if d.Reason != "" {
		return text + ": " + d.Reason
	}
	return text + "."
}
