package api

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
)

// maxReason bounds the reason of a decision, in characters: the model reads
// it as the rejected call's result, so it is a sentence, not a document.
const maxReason = 1000

// decideApproval posts a person's decision on a tool call of a process that
// waits for approval. Operators decide any call; a user only the calls of
// her own processes whose recipe lets the user decide (approval.by: user).
// A decision is taken once: another for the same call is a 409 not_pending,
// unless it repeats the first one's Idempotency-Key.
func (s *Server) decideApproval(w http.ResponseWriter, r *http.Request, who identity) error {
	pid, callID := r.PathValue("id"), r.PathValue("call_id")
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req ApprovalRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if err := req.check(); err != nil {
		return err
	}
	from := who.operatorBy()
	if who.role == RoleUser {
		// Only her own processes; whether she may decide this call is the
		// inbox's to say, in the step that takes the decision
		// (inbox.ErrOperatorOnly: 403).
		if _, err := s.process(r.Context(), pid, who); err != nil {
			return err
		}
		from = who.userFrom()
	}
	d := conversation.ApprovalDecision{CallID: callID, Decision: req.Decision, Reason: req.Reason}
	id, err := s.cfg.Backend.Decide(r.Context(), pid, from, d, key)
	if err != nil {
		return err
	}
	s.logger(r).Info("approval decided", zap.String("process", pid), zap.String("call", callID),
		zap.String("decision", string(req.Decision)), zap.String("by", from))
	s.writeJSON(w, r, http.StatusAccepted, MessageAccepted{MessageID: id})
	return nil
}

// check refuses a decision that is neither approve nor reject, and a reason
// longer than maxReason.
func (req ApprovalRequest) check() error {
	switch {
	case req.Decision == "":
		return errorf(http.StatusBadRequest, CodeInvalidField, `decision: required; want "approve" or "reject"`)
	case !req.Decision.Known():
		return errorf(http.StatusBadRequest, CodeInvalidField, `decision: want "approve" or "reject" (got %q)`, req.Decision)
	}
	if n := utf8.RuneCountInString(req.Reason); n > maxReason {
		return errorf(http.StatusBadRequest, CodeInvalidField, "reason: at most %d characters (got %d); shorten it", maxReason, n)
	}
	return nil
}

// listApprovals answers the tool calls waiting for a decision that the
// caller may take, oldest first: every one for operators, for a user those
// of her own processes that she may decide.
func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request, who identity) error {
	recs, err := s.cfg.Backend.Approvals(r.Context())
	if err != nil {
		return err
	}
	list := ApprovalList{Approvals: []PendingApproval{}}
	for _, rec := range recs {
		if !who.sees(rec) {
			continue
		}
		for _, c := range pendingCalls(rec, who) {
			list.Approvals = append(list.Approvals, PendingApproval{Process: rec.ID, Recipe: rec.Recipe, Owner: rec.Owner, PendingCall: c})
		}
	}
	// Stable: the calls of one round keep the order the model made them in.
	slices.SortStableFunc(list.Approvals, func(a, b PendingApproval) int {
		return cmp.Or(a.RequestedAt.Compare(b.RequestedAt), strings.Compare(a.Process, b.Process))
	})
	s.writeJSON(w, r, http.StatusOK, list)
	return nil
}
