package api

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
)

// The calls waiting for approval in setupApprovals' fake.
var (
	asked    = fakeNow.Add(2 * time.Minute)
	deadline = asked.Add(time.Hour)
	// p_gated (alice's) waits for an operator's decision on c_pay and
	// hers on c_note, asked in one round.
	callPay  = conversation.PendingCall{CallID: "c_pay", Name: "pay", Arguments: json.RawMessage(`{"amount":10}`), By: "operator", Key: "secret-key-1", Requested: asked, Deadline: &deadline}
	callNote = conversation.PendingCall{CallID: "c_note", Name: "note", By: "user", Key: "secret-key-2", Requested: asked}
	// p_bob_gated (bob's) waits for his decision on c_bob, asked earlier.
	callBob = conversation.PendingCall{CallID: "c_bob", Name: "note", Arguments: json.RawMessage(`{"text":"hi"}`), By: "user", Key: "secret-key-3", Requested: fakeNow.Add(time.Minute)}
	// p_alpha (alice's) waits for an operator on c_alpha, asked with
	// p_gated's calls.
	callAlpha = conversation.PendingCall{CallID: "c_alpha", Name: "pay", Arguments: json.RawMessage(`{}`), By: "operator", Key: "secret-key-4", Requested: asked}
)

// setupApprovals is setup with the processes above waiting for approval.
func setupApprovals(t *testing.T) *bundle {
	t.Helper()
	b := setup(t)
	b.fake.awaitApproval("p_gated", "alice", callPay, callNote)
	b.fake.awaitApproval("p_bob_gated", "bob", callBob)
	b.fake.awaitApproval("p_alpha", "alice", callAlpha)
	return b
}

// wire is c as the API shows it.
func wire(c conversation.PendingCall) PendingCall {
	p := PendingCall{CallID: c.CallID, Tool: c.Name, Arguments: c.Arguments, By: c.By, RequestedAt: c.Requested.UTC(), Deadline: c.Deadline}
	if p.Arguments == nil {
		p.Arguments = json.RawMessage(`{}`)
	}
	if p.Deadline != nil {
		d := p.Deadline.UTC()
		p.Deadline = &d
	}
	return p
}

func TestDecideApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		token  string
		path   string
		header map[string]string
		body   string
		status int
		code   string // error code; "" for a success
		msg    string // part of the error message
		from   string // the decision's sender, on a success
	}{
		{name: "operator approves an operator's call", token: tokOlga, path: "p_gated/approvals/c_pay", body: `{"decision": "approve"}`, status: 202, from: "operator:olga"},
		{name: "operator rejects a user's call", token: tokOlga, path: "p_gated/approvals/c_note", body: `{"decision": "reject", "reason": "not now"}`, status: 202, from: "operator:olga"},
		{name: "admin decides", token: tokAdam, path: "p_gated/approvals/c_pay", body: `{"decision": "reject"}`, status: 202, from: "operator:adam"},
		{name: "owner decides her call", token: tokAlice, path: "p_gated/approvals/c_note", body: `{"decision": "approve"}`, status: 202, from: "user:alice"},
		{name: "owner decides an operator's call", token: tokAlice, path: "p_gated/approvals/c_pay", body: `{"decision": "approve"}`, status: 403, code: CodeForbidden,
			msg: "call c_pay of process p_gated waits for an operator's decision (its recipe's approval.by); an operator must decide it"},
		{name: "another user's process", token: tokBob, path: "p_gated/approvals/c_note", body: `{"decision": "approve"}`, status: 404, code: CodeNotFound, msg: `process "p_gated" not found`},
		{name: "unknown call", token: tokOlga, path: "p_gated/approvals/c_nope", body: `{"decision": "approve"}`, status: 409, code: CodeNotPending,
			msg: "process p_gated has no call c_nope waiting for approval"},
		{name: "unknown call of a user", token: tokAlice, path: "p_gated/approvals/c_nope", body: `{"decision": "approve"}`, status: 409, code: CodeNotPending},
		{name: "a process waiting for none", token: tokOlga, path: "p_alice/approvals/c_pay", body: `{"decision": "approve"}`, status: 409, code: CodeNotPending},
		{name: "a closed process", token: tokOlga, path: "p_done/approvals/c_pay", body: `{"decision": "approve"}`, status: 409, code: CodeProcessClosed},
		{name: "unknown process", token: tokOlga, path: "p_nope/approvals/c_pay", body: `{"decision": "approve"}`, status: 404, code: CodeNotFound, msg: `process "p_nope" not found`},
		{name: "unknown decision", token: tokOlga, path: "p_gated/approvals/c_pay", body: `{"decision": "maybe"}`, status: 400, code: CodeInvalidField,
			msg: `decision: want "approve" or "reject" (got "maybe")`},
		{name: "no decision", token: tokOlga, path: "p_gated/approvals/c_pay", body: `{"reason": "why"}`, status: 400, code: CodeInvalidField,
			msg: `decision: required; want "approve" or "reject"`},
		{name: "unknown field", token: tokOlga, path: "p_gated/approvals/c_pay", body: `{"decision": "approve", "approved": true}`, status: 400, code: CodeUnknownField, msg: `"approved"`},
		{name: "reason too long", token: tokOlga, path: "p_gated/approvals/c_pay", body: `{"decision": "reject", "reason": "` + strings.Repeat("é", maxReason+1) + `"}`,
			status: 400, code: CodeInvalidField, msg: "reason: at most 1000 characters (got 1001)"},
		{name: "bad idempotency key", token: tokOlga, path: "p_gated/approvals/c_pay", header: map[string]string{"Idempotency-Key": strings.Repeat("k", 300)},
			body: `{"decision": "approve"}`, status: 400, code: CodeInvalidHeader},
		{name: "no token", path: "p_gated/approvals/c_pay", body: `{"decision": "approve"}`, status: 401, code: CodeUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupApprovals(t)
			pid, _, _ := strings.Cut(tt.path, "/")
			before := len(b.fake.logs[pid])
			w := b.do("POST", "/v1/processes/"+tt.path, tt.token, tt.header, tt.body)
			if w.Code != tt.status || errorCode(w.Body.Bytes()) != tt.code {
				t.Fatalf("%d %s, want %d %q", w.Code, w.Body, tt.status, tt.code)
			}
			if tt.msg != "" {
				wantMessage(tt.msg)(t, w.Body.Bytes())
			}
			logged := b.fake.logs[pid][before:]
			if tt.code != "" {
				if len(logged) > 0 {
					t.Errorf("a refused decision was stored: %+v", logged)
				}
				return
			}
			var acc MessageAccepted
			if err := json.Unmarshal(w.Body.Bytes(), &acc); err != nil || acc.MessageID == "" {
				t.Fatalf("answer %s: want a message id", w.Body)
			}
			if len(logged) != 1 || logged[0].By != tt.from || logged[0].InboxMessage.Kind != conversation.KindApproval {
				t.Fatalf("logged %+v; want one approval from %s", logged, tt.from)
			}
			var d conversation.ApprovalDecision
			if err := json.Unmarshal([]byte(logged[0].InboxMessage.Content), &d); err != nil {
				t.Fatal(err)
			}
			var req ApprovalRequest
			_ = json.Unmarshal([]byte(tt.body), &req)
			_, call, _ := strings.Cut(strings.TrimPrefix(tt.path, pid+"/"), "/")
			if want := (conversation.ApprovalDecision{CallID: call, Decision: req.Decision, Reason: req.Reason}); d != want {
				t.Errorf("decision posted %+v, want %+v", d, want)
			}
		})
	}
}

// A decision is taken once: the same Idempotency-Key again answers the
// first message's id, another key a 409 saying it was decided.
func TestDecisionTakenOnce(t *testing.T) {
	t.Parallel()
	b := setupApprovals(t)
	decide := func(token, key string) (int, []byte) {
		w := b.do("POST", "/v1/processes/p_gated/approvals/c_note", token, map[string]string{"Idempotency-Key": key}, `{"decision": "approve"}`)
		return w.Code, w.Body.Bytes()
	}
	var ids []string
	for range 2 {
		code, body := decide(tokAlice, "k-1")
		var acc MessageAccepted
		if err := json.Unmarshal(body, &acc); err != nil || code != 202 {
			t.Fatalf("decide with k-1: %d %s", code, body)
		}
		ids = append(ids, acc.MessageID)
	}
	if ids[0] != ids[1] {
		t.Errorf("message ids %q: want the same id for the same key", ids)
	}
	for _, token := range []string{tokAlice, tokOlga} {
		code, body := decide(token, "k-2")
		if code != 409 || errorCode(body) != CodeNotPending {
			t.Errorf("decide again with another key: %d %s, want 409 %s", code, body, CodeNotPending)
		}
		wantMessage("call c_note of process p_gated was decided already")(t, body)
	}
	if n := len(b.fake.logs["p_gated"]); n != 1 {
		t.Errorf("%d decisions stored, want 1", n)
	}
}

// A user's decision on an operator's call that the record the API read did
// not list (the turn that asks for it committed between the read and the
// post) is refused by the inbox itself: 403, nothing stored.
func TestOperatorOnlyInTheInbox(t *testing.T) {
	t.Parallel()
	b := setupApprovals(t)
	b.fake.mu.Lock()
	rec := b.fake.procs["p_alpha"]
	rec.Approvals = nil // the record as the API read it, before the commit
	b.fake.procs["p_alpha"] = rec
	b.fake.mu.Unlock()
	w := b.do("POST", "/v1/processes/p_alpha/approvals/c_alpha", tokAlice, nil, `{"decision": "approve"}`)
	if w.Code != 403 || errorCode(w.Body.Bytes()) != CodeForbidden {
		t.Fatalf("a user's decision on an operator's call: %d %s, want 403 %s", w.Code, w.Body, CodeForbidden)
	}
	wantMessage("an operator must decide it")(t, w.Body.Bytes())
	if n := len(b.fake.logs["p_alpha"]); n != 0 {
		t.Errorf("%d decisions stored, want none", n)
	}
}

// A process's record says what it waits for, with the calls its reader may
// decide, never their call keys.
func TestRecordShowsApprovals(t *testing.T) {
	t.Parallel()
	b := setupApprovals(t)
	for _, tc := range []struct {
		token string
		want  []PendingCall
	}{
		{tokOlga, []PendingCall{wire(callPay), wire(callNote)}},
		{tokAlice, []PendingCall{wire(callNote)}},
	} {
		w := b.do("GET", "/v1/processes/p_gated", tc.token, nil, "")
		if w.Code != 200 {
			t.Fatalf("get: %d %s", w.Code, w.Body)
		}
		if strings.Contains(w.Body.String(), "secret-key") || strings.Contains(w.Body.String(), `"key"`) {
			t.Errorf("the record shows a call key: %s", w.Body)
		}
		var p Process
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if p.WaitingFor != "approval" {
			t.Errorf("waiting_for = %q, want approval", p.WaitingFor)
		}
		if diff := cmp.Diff(tc.want, p.Approvals); diff != "" {
			t.Errorf("approvals for %s (-want +got):\n%s", tc.token, diff)
		}
		var list ProcessPage
		if err := json.Unmarshal(b.do("GET", "/v1/processes", tc.token, nil, "").Body.Bytes(), &list); err != nil {
			t.Fatal(err)
		}
		for _, lp := range list.Processes {
			if lp.ID == "p_gated" && !cmp.Equal(lp.Approvals, tc.want) {
				t.Errorf("the list's p_gated for %s has approvals %+v, want %+v", tc.token, lp.Approvals, tc.want)
			}
		}
	}
	// Bob's only call is his to decide; alice sees p_alpha waiting, and none
	// of its calls, which an operator decides.
	w := b.do("GET", "/v1/processes/p_alpha", tokAlice, nil, "")
	if got := w.Body.String(); !strings.Contains(got, `"waiting_for":"approval"`) || strings.Contains(got, `"approvals"`) {
		t.Errorf("p_alpha for its owner: %s; want waiting_for approval and no approvals", got)
	}
	w = b.do("GET", "/v1/processes/p_alice", tokAlice, nil, "")
	if got := w.Body.String(); strings.Contains(got, "waiting_for") || strings.Contains(got, "approvals") {
		t.Errorf("a process waiting for its user: %s; want neither waiting_for nor approvals", got)
	}
	// The exact shape of a call on the wire.
	body, err := json.Marshal(wire(callPay))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"call_id":"c_pay","tool":"pay","arguments":{"amount":10},"by":"operator","requested_at":"2023-11-14T22:15:20Z","deadline":"2023-11-14T23:15:20Z"}`
	if string(body) != want {
		t.Errorf("a call on the wire:\n%s\nwant\n%s", body, want)
	}
}

// GET /v1/approvals: every waiting call for operators, a user's own that
// she may decide, oldest first, then by process.
func TestListApprovals(t *testing.T) {
	t.Parallel()
	b := setupApprovals(t)
	entry := func(pid, owner string, c conversation.PendingCall) PendingApproval {
		return PendingApproval{Process: pid, Recipe: "default", Owner: owner, PendingCall: wire(c)}
	}
	all := []PendingApproval{
		entry("p_bob_gated", "bob", callBob),
		entry("p_alpha", "alice", callAlpha),
		entry("p_gated", "alice", callPay),
		entry("p_gated", "alice", callNote),
	}
	for _, tc := range []struct {
		name, token string
		want        []PendingApproval
	}{
		{"operator", tokOlga, all},
		{"admin", tokAdam, all},
		{"alice", tokAlice, []PendingApproval{entry("p_gated", "alice", callNote)}},
		{"bob", tokBob, []PendingApproval{entry("p_bob_gated", "bob", callBob)}},
	} {
		w := b.do("GET", "/v1/approvals", tc.token, nil, "")
		var list ApprovalList
		if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != 200 {
			t.Fatalf("%s: %d %s", tc.name, w.Code, w.Body)
		}
		if diff := cmp.Diff(tc.want, list.Approvals); diff != "" {
			t.Errorf("%s lists (-want +got):\n%s", tc.name, diff)
		}
		if strings.Contains(w.Body.String(), "secret-key") {
			t.Errorf("%s: the list shows a call key: %s", tc.name, w.Body)
		}
	}
	if w := setup(t).do("GET", "/v1/approvals", tokOlga, nil, ""); w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"approvals":[]}` {
		t.Errorf("nothing waiting: %d %s, want an empty list", w.Code, w.Body)
	}
}

// The client decides (with the retries of a key) and lists approvals.
func TestClientApprovals(t *testing.T) {
	t.Parallel()
	b := setupApprovals(t)
	ts := serve(t, b)
	ctx := context.Background()
	alice, olga := NewClient(ts.URL, tokAlice), NewClient(ts.URL, tokOlga)

	list, err := alice.Approvals(ctx)
	if err != nil || len(list) != 1 || list[0].CallID != "c_note" || list[0].Process != "p_gated" {
		t.Fatalf("Approvals = %+v, %v; want alice's c_note", list, err)
	}
	id, err := alice.Decide(ctx, "p_gated", "c_note", ApprovalRequest{Decision: conversation.Approve}, "key-1")
	if err != nil || id == "" {
		t.Fatalf("Decide = %q, %v", id, err)
	}
	if again, err := alice.Decide(ctx, "p_gated", "c_note", ApprovalRequest{Decision: conversation.Approve}, "key-1"); err != nil || again != id {
		t.Errorf("Decide again with the key = %q, %v; want %q", again, err, id)
	}
	_, err = alice.Decide(ctx, "p_gated", "c_pay", ApprovalRequest{Decision: conversation.Approve}, "")
	wantAPIError(t, "a user deciding an operator's call", err, 403, CodeForbidden)
	_, err = olga.Decide(ctx, "p_gated", "c_note", ApprovalRequest{Decision: conversation.Reject}, "")
	wantAPIError(t, "deciding a decided call", err, 409, CodeNotPending)
	_, err = olga.Decide(ctx, "p_gated", "c/pay?x", ApprovalRequest{Decision: conversation.Reject, Reason: "no"}, "")
	if e := (*Error)(nil); !errors.As(err, &e) || e.Code != CodeNotPending || !strings.Contains(e.Message, "no call c/pay?x waiting") {
		t.Errorf("Decide of a call id with / and ?: %v; want the call's id escaped in the path and named in a 409", err)
	}
	_, err = olga.Decide(ctx, "p_gated", "c_pay", ApprovalRequest{Decision: "sure"}, "")
	wantAPIError(t, "an unknown decision", err, 400, CodeInvalidField)
	if _, err := olga.Decide(ctx, "p_gated", "c_pay", ApprovalRequest{Decision: conversation.Reject, Reason: "too much"}, ""); err != nil {
		t.Errorf("an operator rejecting c_pay: %v", err)
	}
	var decided []string
	for _, e := range b.fake.logs["p_gated"] {
		if d, ok := e.InboxMessage.Approval(); ok {
			decided = append(decided, d.CallID+" "+string(d.Decision)+" "+e.By)
		}
	}
	if want := []string{"c_note approve user:alice", "c_pay reject operator:olga"}; !cmp.Equal(decided, want) {
		t.Errorf("decisions stored %q, want %q", decided, want)
	}
	if p, err := olga.GetProcess(ctx, "p_gated"); err != nil || p.WaitingFor != string(inbox.WaitingApproval) || p.State != "READY" {
		t.Errorf("GetProcess after the decisions = %+v, %v; want READY, the record still waiting for approval until a turn applies them", p, err)
	}
}
