package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

// payScript fetches url's /pay (a call of the gated recipe, which waits
// for approval), then responds.
func payScript(t *testing.T, url string) llm.Model {
	return nodetest.Script(t, fmt.Sprintf(`
turns:
  - rounds:
      - calls:
          - {name: http_fetch, args: {url: "%s/pay"}}
      - calls:
          - {name: respond, args: {message: "Done."}}
`, url))
}

// waitApproval waits until process pid waits for the approval of one call,
// and returns the call.
func waitApproval(t *testing.T, c *nodetest.Commits, pid string) conversation.PendingCall {
	t.Helper()
	rec := c.Wait(t, "the process to wait for approval", func(r store.Record) bool {
		return r.ID == pid && r.Waiting == inbox.WaitingApproval
	})
	if rec.Status.State != lifecycle.Blocked || len(rec.Approvals) != 1 || rec.Approvals[0].Name != "http_fetch" {
		t.Fatalf("record %s waiting for %+v; want BLOCKED waiting for one http_fetch", rec.Status, rec.Approvals)
	}
	return rec.Approvals[0]
}

// A call that waits for approval runs once it is approved, even when the
// node running it dies after applying the approval and before saving the
// result: another node completes the turn without running it again (a
// tool that is not idempotent is reported as possibly run); the decision
// cannot be posted twice.
func TestApprovalSurvivesANodesDeath(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	hanging := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		hanging <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	redisSrv := testutil.StartRedis(t)
	models := map[string]llm.Model{"default": payScript(t, srv.URL)}
	const ttl = 600 * time.Millisecond
	clientA := redis.NewClient(&redis.Options{Addr: redisSrv.Addr})
	commitsA := nodetest.NewCommits()
	a := startNode(t, Config{Redis: clientA, NodeID: "a", Models: models, LeaseTTL: ttl, OnCommit: commitsA.Add})
	ctx := context.Background()
	rec, err := a.Create(ctx, NewProcess{Recipe: "gated", Input: "pay it"})
	if err != nil {
		t.Fatal(err)
	}
	call := waitApproval(t, commitsA, rec.ID)
	if hits.Load() != 0 {
		t.Fatal("the call ran before it was approved")
	}
	d := conversation.ApprovalDecision{CallID: call.CallID, Decision: conversation.Approve}
	if _, err := a.Decide(ctx, rec.ID, "operator:bo", d, "k1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Decide(ctx, rec.ID, "operator:eve", d, "k2"); !errors.Is(err, inbox.ErrNotPending) {
		t.Fatalf("a second decision = %v, want ErrNotPending", err)
	}
	select {
	case <-hanging:
	case <-time.After(nodetest.WaitTimeout):
		t.Fatal("node a never ran the approved call")
	}
	_ = clientA.Close() // node a dies in the middle of the call

	c := nodetest.NewCommits()
	startNode(t, Config{Redis: redisSrv.Client(t), NodeID: "b", Models: models, LeaseTTL: ttl, OnCommit: c.Add})
	done := c.Wait(t, "node b to finish the turn", func(r store.Record) bool { return r.ID == rec.ID })
	if done.Status.State != lifecycle.Blocked || done.Waiting != inbox.WaitingUser {
		t.Fatalf("after recovery: %s waiting %q; want BLOCKED, waiting for the user", done.Status, done.Waiting)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the approved call ran %d times, want once", n)
	}
	evs, err := nodetest.RedisLog(t, redisSrv, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	var decided []string
	var result string
	for _, e := range evs {
		switch {
		case e.ApprovalDecided != nil:
			decided = append(decided, e.By)
		case e.ToolCallResponse != nil && e.ToolCallResponse.CallID == call.CallID:
			result = conversation.TextOf(e.ToolCallResponse.Content)
		}
	}
	if len(decided) != 1 || decided[0] != "operator:bo" {
		t.Errorf("approval_decided events by %q; want one, by operator:bo", decided)
	}
	if result != rounds.OrphanedCallError {
		t.Errorf("the call's result = %q; want the orphan's", result)
	}
}

// A call not decided within the recipe's approval.timeout is rejected: the
// model reads why, and the turn goes on.
func TestApprovalTimesOut(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	clock := nodetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: testutil.StartRedis(t).Client(t), NodeID: "a", Clock: clock.Now, OnCommit: c.Add,
		Models: map[string]llm.Model{"default": payScript(t, srv.URL)}})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "gated", Input: "pay it"})
	if err != nil {
		t.Fatal(err)
	}
	call := waitApproval(t, c, rec.ID)
	if fired, err := n.FireDueTimers(ctx); err != nil || fired != 0 {
		t.Fatalf("FireDueTimers before the deadline = %d, %v; want nothing", fired, err)
	}
	clock.Add(time.Hour + time.Second)
	if fired, err := n.FireDueTimers(ctx); err != nil || fired != 1 {
		t.Fatalf("FireDueTimers after the deadline = %d, %v; want the timeout", fired, err)
	}
	c.Wait(t, "the turn after the timeout", func(r store.Record) bool { return r.ID == rec.ID && r.Waiting == inbox.WaitingUser })
	if hits.Load() != 0 {
		t.Error("a call that timed out ran")
	}
	var result *conversation.ToolCallResponse
	for _, e := range mustLog(t, n, rec.ID) {
		if e.ToolCallResponse != nil && e.ToolCallResponse.CallID == call.CallID {
			result = e.ToolCallResponse
		}
	}
	if result == nil || !result.IsError || !strings.Contains(conversation.TextOf(result.Content), "not approved within 1h") {
		t.Errorf("the call's result = %+v; want an error saying it was not approved within 1h", result)
	}
}

func TestShortDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 90 * time.Minute: "1h30m", 30 * time.Minute: "30m", 45 * time.Second: "45s",
		90 * time.Second: "1m30s", 7 * 24 * time.Hour: "168h", time.Hour + time.Second: "1h0m1s",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
