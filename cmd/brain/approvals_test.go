package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

// gatedRecipe arms timers once the user approves, and fetches pages once an
// operator does, within an hour.
const gatedRecipe = `
name: gated
extends: default
tools:
  - respond
  - name: schedule_wakeup
    approval: {by: user}
  - name: http_fetch
    config: {allow_hosts: [127.0.0.1]}
    approval: {by: operator, timeout: 1h}
`

// gatedScript calls both tools of gatedRecipe in one round, then responds.
const gatedScript = `
turns:
  - rounds:
      - calls:
          - {name: schedule_wakeup, args: {in: "1h", message: "check the build"}}
          - {name: http_fetch, args: {url: "%s/pay"}}
      - calls:
          - {name: respond, args: {message: "Done.", awaiting_user_input: true}}
`

// setupGated is setupClient with the gated recipe and a model that plays
// gatedScript against a page that counts its fetches in hits.
func setupGated(t *testing.T) (s *clientSetup, hits *atomic.Int32) {
	t.Helper()
	hits = new(atomic.Int32)
	page := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(page.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gated.yaml"), []byte(gatedRecipe), 0o600); err != nil {
		t.Fatal(err)
	}
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	script, err := scripted.Parse(fmt.Appendf(nil, gatedScript, page.URL))
	if err != nil {
		t.Fatal(err)
	}
	s = setupClientWith(t, func(h http.Handler) http.Handler { return h }, func(c *brain.Config) {
		c.Recipes, c.ResolveModel, c.Models = lib, nil, map[string]llm.Model{"default": scripted.New(script)}
	})
	return s, hits
}

// The approval commands against a server: brain approvals lists what
// waits, brain approve lets the user's call run, brain reject refuses the
// operator's with a reason the model reads; a decision is taken once.
func TestApprovalCommands(t *testing.T) {
	t.Parallel()
	s, hits := setupGated(t)
	pid, _ := s.newProcess(t, "gated", "arm", "it", "and", "pay")
	s.waitCommit(t, pid, lifecycle.Blocked)

	out := s.mustBrain(t, "approvals")
	rows := regexp.MustCompile(`^PROCESS +CALL +TOOL +BY +WAITING +DEADLINE +ARGUMENTS\n` +
		regexp.QuoteMeta(pid) + ` +(\S+) +schedule_wakeup +user +\d+s +- +\{"in":"1h","message":"check the build"\}\n` +
		regexp.QuoteMeta(pid) + ` +(\S+) +http_fetch +operator +\d+s +in (59m|1h) +\{"url":"http://127\.0\.0\.1:\d+/pay"\}\n$`).FindStringSubmatch(out)
	if rows == nil {
		t.Fatalf("brain approvals:\n%s", out)
	}
	wakeup, fetch := rows[1], rows[2]
	if out := s.mustBrain(t, "logs", pid); !strings.Contains(out, `[approval] schedule_wakeup {"in":"1h","message":"check the build"} waits for your decision (call `+wakeup+")\n") ||
		strings.Contains(out, "http_fetch") {
		t.Errorf("brain logs shows the user the call she decides, not the operator's:\n%s", out)
	}

	if out := s.mustBrain(t, "approve", pid, wakeup); out != wakeup+" of "+pid+" approved\n" {
		t.Errorf("brain approve: %q", out)
	}
	s.waitCommit(t, pid, lifecycle.Blocked) // the call ran; the turn waits for the other
	if code, out, stderr := s.brain(context.Background(), "approve", pid, wakeup); code != 1 || out != "" ||
		stderr != "brain approve: 409 not_pending: process "+pid+" has no call "+wakeup+" waiting for approval (it never waited, or its decision has been applied); GET /v1/processes/"+pid+" lists the calls that wait\n" {
		t.Errorf("brain approve again: exit %d, stdout %q, stderr %q; want 1 and the 409 on one line", code, out, stderr)
	}
	if out := s.mustBrain(t, "approvals"); strings.Contains(out, wakeup) || !strings.Contains(out, fetch) {
		t.Errorf("brain approvals once the user's call ran:\n%s", out)
	}
	// The timers: the one the approved call armed, and the other call's
	// deadline.
	if out := s.mustBrain(t, "timers", pid); !regexp.MustCompile(`(?m)^w_\w+ +\S+ +no +\(rejects call `+regexp.QuoteMeta(fetch)+` unless decided\)$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^w_\w+ +\S+ +no +check the build$`).MatchString(out) {
		t.Errorf("brain timers:\n%s", out)
	}

	if out := s.mustBrain(t, "reject", pid, fetch, "--reason", "no payments today"); out != fetch+" of "+pid+" rejected\n" {
		t.Errorf("brain reject: %q", out)
	}
	s.waitCommit(t, pid, lifecycle.Blocked)
	if out := s.mustBrain(t, "approvals"); strings.Count(out, "\n") != 1 {
		t.Errorf("brain approvals with nothing waiting:\n%s\nwant the header alone", out)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the rejected fetch ran %d times", n)
	}
	raw := s.mustBrain(t, "logs", "--view", "raw", pid)
	for _, want := range []string{
		"approval_requested engine: " + wakeup + " schedule_wakeup (by user), " + fetch + " http_fetch (by operator)\n",
		"approval_decided operator: " + wakeup + " approve\n", // an open server's requests are an admin's
		"approval_decided operator: " + fetch + " reject: no payments today\n",
		"tool_call_response tool:http_fetch: http_fetch (error): This call was not run: operator rejected it: no payments today\n",
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("brain logs --view raw lacks %q:\n%s", want, raw)
		}
	}
}

// The table's columns: how long a call has waited, how long it has until
// its deadline, its arguments clipped to one line.
func TestApprovalTable(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	soon, gone := now.Add(90*time.Second), now.Add(-time.Second)
	long, _ := json.Marshal(map[string]string{"text": strings.Repeat("word ", 40)})
	var out bytes.Buffer
	writeApprovalTable(&out, []api.PendingApproval{
		{Process: "p_a", PendingCall: api.PendingCall{CallID: "c1", Tool: "pay", Arguments: json.RawMessage(`{"amount": 10}`), By: "operator",
			RequestedAt: now.Add(-3 * time.Minute), Deadline: &soon}},
		{Process: "p_b", PendingCall: api.PendingCall{CallID: "c2", Tool: "note", Arguments: long, By: "user", RequestedAt: now.Add(-5 * time.Second)}},
		{Process: "p_c", PendingCall: api.PendingCall{CallID: "c3", Tool: "pay", Arguments: json.RawMessage(`{}`), By: "operator",
			RequestedAt: now.Add(-2 * time.Hour), Deadline: &gone}},
	}, now)
	want := "PROCESS  CALL  TOOL  BY        WAITING  DEADLINE  ARGUMENTS\n" +
		`p_a      c1    pay   operator  3m       in 1m     {"amount": 10}` + "\n" +
		`p_b      c2    note  user      5s       -         ` + clip(string(long)) + "\n" +
		`p_c      c3    pay   operator  2h       passed    {}` + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(clip(string(long)), "…") {
		t.Error("long arguments are not clipped")
	}
}

// A raw line says which calls wait and who decided what.
func TestApprovalRawLines(t *testing.T) {
	t.Parallel()
	asked := conversation.NewApprovalRequested([]conversation.PendingCall{{CallID: "c1", Name: "pay", By: "operator", Key: "k"}})
	asked.By = "engine"
	decided := conversation.NewApprovalDecided(conversation.ApprovalDecision{CallID: "c1", Decision: conversation.Approve})
	decided.By = "operator:bo"
	for _, tc := range []struct {
		e    conversation.Event
		want string
	}{
		{asked, "approval_requested engine: c1 pay (by operator)"},
		{decided, "approval_decided operator:bo: c1 approve"},
	} {
		if got := rawLine(&tc.e); got != tc.want {
			t.Errorf("raw line %q, want %q", got, tc.want)
		}
	}
}
