package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
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

// The approvals API on a real node and Redis: the process waits for two
// calls; each reader sees the ones she may decide; the user decides hers
// (once, whatever the retries), not the operator's; the turn runs the
// approved call and waits on; the operator's rejection ends the wait
// without running the other.
func TestApprovalsWithANode(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	pay := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(pay.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gated.yaml"), []byte(gatedRecipe), 0o600); err != nil {
		t.Fatal(err)
	}
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	commits := nodetest.NewCommits()
	node, ada, olga := serveNode(t, brain.Config{
		Recipes: lib, OnCommit: commits.Add,
		Models: map[string]llm.Model{"default": nodetest.Script(t, fmt.Sprintf(gatedScript, pay.URL))},
	})
	if err := node.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()

	p, err := ada.CreateProcess(ctx, CreateRequest{Recipe: "gated", Input: "arm it and pay"})
	if err != nil {
		t.Fatal(err)
	}
	rec := commits.Wait(t, "the turn to wait for approval", func(r store.Record) bool { return r.ID == p.ID && r.Waiting == inbox.WaitingApproval })
	if len(rec.Approvals) != 2 {
		t.Fatalf("the record waits for %+v; want two calls", rec.Approvals)
	}
	wakeup, fetch := rec.Approvals[0], rec.Approvals[1]

	// Each reader sees the calls she may decide, and no call key.
	for _, tc := range []struct {
		name string
		c    *Client
		want []string
	}{{"ada", ada, []string{"schedule_wakeup"}}, {"olga", olga, []string{"schedule_wakeup", "http_fetch"}}} {
		got, err := tc.c.GetProcess(ctx, p.ID)
		if err != nil || got.State != "BLOCKED" || got.WaitingFor != "approval" {
			t.Fatalf("%s: GetProcess = %+v, %v; want BLOCKED waiting for approval", tc.name, got, err)
		}
		var tools []string
		for _, c := range got.Approvals {
			tools = append(tools, c.Tool)
		}
		list, err := tc.c.Approvals(ctx)
		if err != nil || len(list) != len(tc.want) {
			t.Fatalf("%s: Approvals = %+v, %v; want %d", tc.name, list, err, len(tc.want))
		}
		for i, a := range list {
			if a.Process != p.ID || a.Owner != "ada" || a.Recipe != "gated" || a.Tool != tc.want[i] {
				t.Errorf("%s: approval %d = %+v; want %s of %s", tc.name, i, a, tc.want[i], p.ID)
			}
		}
		if diff := cmp.Diff(tc.want, tools); diff != "" {
			t.Errorf("%s: the record's calls (-want +got):\n%s", tc.name, diff)
		}
	}
	raw := getRaw(t, ctx, olga, "/v1/processes/"+p.ID)
	if strings.Contains(raw, wakeup.Key) || strings.Contains(raw, `"key"`) {
		t.Errorf("the record shows a call key: %s", raw)
	}

	_, err = ada.Decide(ctx, p.ID, fetch.CallID, ApprovalRequest{Decision: conversation.Approve}, "")
	wantAPIError(t, "ada deciding the operator's call", err, http.StatusForbidden, CodeForbidden)
	first, err := ada.Decide(ctx, p.ID, wakeup.CallID, ApprovalRequest{Decision: conversation.Approve}, "ada-1")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ada.Decide(ctx, p.ID, wakeup.CallID, ApprovalRequest{Decision: conversation.Approve}, "ada-1"); err != nil || again != first {
		t.Errorf("the decision again with its key = %q, %v; want %q", again, err, first)
	}
	_, err = olga.Decide(ctx, p.ID, wakeup.CallID, ApprovalRequest{Decision: conversation.Reject}, "olga-1")
	wantAPIError(t, "deciding a decided call", err, http.StatusConflict, CodeNotPending)

	// The turn the decision wakes runs the approved call and waits on.
	commits.Wait(t, "the turn to apply ada's approval", func(r store.Record) bool {
		return r.ID == p.ID && r.Waiting == inbox.WaitingApproval && len(r.Approvals) == 1 && r.Approvals[0].CallID == fetch.CallID
	})
	// Its timers: the approval deadline of the call left, and the one the
	// approved call armed.
	timers, err := ada.Timers(ctx, p.ID)
	var kinds []string
	for _, tm := range timers {
		kinds = append(kinds, tm.Rejects+"|"+tm.Message)
	}
	want := []string{"|check the build", fetch.CallID + "|"}
	slices.Sort(kinds)
	slices.Sort(want)
	if err != nil || !slices.Equal(kinds, want) {
		t.Errorf("timers after the approval = %+v, %v; want the deadline that rejects %s and the approved call's", timers, err, fetch.CallID)
	}
	if list, err := ada.Approvals(ctx); err != nil || len(list) != 0 {
		t.Errorf("ada's approvals once hers is applied = %+v, %v; want none", list, err)
	}

	if _, err := olga.Decide(ctx, p.ID, fetch.CallID, ApprovalRequest{Decision: conversation.Reject, Reason: "no payments today"}, ""); err != nil {
		t.Fatal(err)
	}
	commits.Wait(t, "the turn to answer after the rejection", func(r store.Record) bool {
		return r.ID == p.ID && r.Waiting == inbox.WaitingUser
	})
	if n := hits.Load(); n != 0 {
		t.Errorf("the rejected call ran %d times", n)
	}
	if got, err := olga.GetProcess(ctx, p.ID); err != nil || got.State != "BLOCKED" || got.WaitingFor != "" || got.Approvals != nil {
		t.Errorf("GetProcess after the rejection = %+v, %v; want BLOCKED waiting for its user", got, err)
	}
	if list, err := olga.Approvals(ctx); err != nil || len(list) != 0 {
		t.Errorf("Approvals after the rejection = %+v, %v; want none", list, err)
	}
	_, err = olga.Decide(ctx, p.ID, fetch.CallID, ApprovalRequest{Decision: conversation.Approve}, "")
	wantAPIError(t, "deciding a call that no longer waits", err, http.StatusConflict, CodeNotPending)
}

// getRaw returns the body of a GET of path, as c sends it.
func getRaw(t *testing.T, ctx context.Context, c *Client, path string) string {
	t.Helper()
	req, err := c.newRequest(ctx, http.MethodGet, path, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s, %v", path, resp.StatusCode, body, err)
	}
	return string(body)
}
