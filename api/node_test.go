package api

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// held wraps a model and holds its second call (the turn's second round)
// until release is closed.
type held struct {
	llm.Model
	calls   atomic.Int32
	release chan struct{}
}

func (h *held) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	if h.calls.Add(1) == 2 {
		select {
		case <-h.release:
		case <-ctx.Done():
		}
	}
	return h.Model.Generate(ctx, req)
}

const turnScript = `
turns:
  - rounds:
      - calls:
          - name: tell_user
            args: {message: "Looking it up."}
      - calls:
          - name: respond
            args: {message: "Here is the answer.", awaiting_user_input: true}
`

// The API on a real node and Redis: a process created without input waits
// BLOCKED; a message runs a turn that ends BLOCKED with the answer; an event
// stream dropped in the middle of the turn and resumed with Last-Event-ID
// loses and repeats nothing.
func TestWithANode(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(turnScript))
	if err != nil {
		t.Fatal(err)
	}
	model := &held{Model: scripted.New(s), release: make(chan struct{})}
	node, err := brain.New(brain.Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Recipes: recipes.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	srv, err := New(Config{Backend: node, FollowBlock: 50 * time.Millisecond, Heartbeat: 50 * time.Millisecond, Tokens: []Token{
		{Name: "ada", Role: RoleUser, SHA256: HashToken("tok-ada")},
		{Name: "olga", Role: RoleOperator, SHA256: HashToken("tok-olga")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	resumed := make(chan struct{}, 1) // a stream request with Last-Event-ID arrived
	h := checked(t, srv)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "" {
			select {
			case resumed <- struct{}{}:
			default:
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ada, olga := NewClient(ts.URL, "tok-ada"), NewClient(ts.URL, "tok-olga")

	p, err := ada.CreateProcess(ctx, CreateRequest{Recipe: "default"})
	if err != nil || p.State != "BLOCKED" || p.Owner != "ada" {
		t.Fatalf("CreateProcess = %+v, %v; want BLOCKED, owned by ada", p, err)
	}
	if _, err := ada.Send(ctx, p.ID, "What is new?", "ada-1"); err != nil {
		t.Fatal(err)
	}

	// The first stream, from the start, drops after the tell_user result:
	// the model is held in the turn's second round.
	errStop := errors.New("stop reading")
	var first []string
	err = olga.Stream(ctx, p.ID, "raw", "", func(e conversation.Event) error {
		first = append(first, e.ID)
		if r := e.ToolCallResponse; r != nil && r.Name == "tell_user" {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("first stream: %v", err)
	}
	if p, err := olga.GetProcess(ctx, p.ID); err != nil || p.State != "RUNNING" {
		t.Fatalf("process during the held round = %+v, %v; want RUNNING", p, err)
	}
	_, err = olga.DeleteProcess(ctx, p.ID)
	wantAPIError(t, "delete during a turn", err, 409, CodeProcessRunning)

	// The second stream resumes with Last-Event-ID; once the server has its
	// request, the model answers and the turn ends.
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-resumed:
			close(model.release)
		case <-ctx.Done():
		}
	})
	var second []string
	err = olga.Stream(ctx, p.ID, "raw", first[len(first)-1], func(e conversation.Event) error {
		second = append(second, e.ID)
		if c := e.StateChange; c != nil && c.Event == "await_user" {
			return errStop
		}
		return nil
	})
	wg.Wait()
	if !errors.Is(err, errStop) {
		t.Fatalf("second stream: %v", err)
	}

	full, err := node.Log(ctx, p.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(append(first, second...), ","), idsOf(full); got != want {
		t.Errorf("ids of the two streams:\n%s\nwant the log's:\n%s", got, want)
	}
	if p, err := ada.GetProcess(ctx, p.ID); err != nil || p.State != "BLOCKED" {
		t.Errorf("process after the answer = %+v, %v; want BLOCKED", p, err)
	}

	// Ada reads the user view only: her message, the progress note and
	// the answer, with the log's ids.
	page, err := ada.Events(ctx, p.ID, "user", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := idsOf(page.Events), idsOf(conversation.UserView(full)); got != want {
		t.Errorf("user view = %s, want %s", got, want)
	}
	body, _ := json.Marshal(page.Events)
	for _, text := range []string{"What is new?", "Looking it up.", "Here is the answer."} {
		if !strings.Contains(string(body), text) {
			t.Errorf("the user view lacks %q: %s", text, body)
		}
	}
	_, err = ada.Events(ctx, p.ID, "raw", "", 0)
	wantAPIError(t, "raw view as a user", err, 403, CodeForbidden)

	// Ada deletes her conversation: a stream still open on it ends.
	streamEnded := make(chan error, 1)
	go func() {
		streamEnded <- olga.Stream(ctx, p.ID, "raw", full[len(full)-1].ID, func(conversation.Event) error { return nil })
	}()
	gone, err := ada.DeleteProcess(ctx, p.ID)
	if err != nil || gone.ID != p.ID || gone.State != "BLOCKED" {
		t.Fatalf("DeleteProcess = %+v, %v; want the BLOCKED process", gone, err)
	}
	_, err = ada.GetProcess(ctx, p.ID)
	wantAPIError(t, "get a deleted process", err, 404, CodeNotFound)
	wantAPIError(t, "a stream open on a deleted process", <-streamEnded, 404, CodeNotFound)
	if _, err := node.Log(ctx, p.ID, "", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("log of the deleted process: %v, want ErrNotFound", err)
	}
	_, err = NewClient(ts.URL, "tok-olga").Send(ctx, "p_nope", "hi", "")
	wantAPIError(t, "message a missing process", err, 404, CodeNotFound)
}

// serveNode serves the API of a node made with cfg (not started; on its
// own Redis, with the built-in recipes and a model that answers nothing
// unless cfg says) and returns it with the clients of ada, a user, and
// olga, an operator.
func serveNode(t *testing.T, cfg brain.Config) (*brain.Node, *Client, *Client) {
	t.Helper()
	cfg.Redis = testutil.Redis(t)
	if cfg.Recipes == nil {
		cfg.Recipes = recipes.Builtin()
	}
	if cfg.Models == nil {
		cfg.Models = map[string]llm.Model{"default": scripted.New(&scripted.Script{})}
	}
	node, err := brain.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Backend: node, Tokens: []Token{
		{Name: "ada", Role: RoleUser, SHA256: HashToken("tok-ada")},
		{Name: "olga", Role: RoleOperator, SHA256: HashToken("tok-olga")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(checked(t, srv))
	t.Cleanup(ts.Close)
	return node, NewClient(ts.URL, "tok-ada"), NewClient(ts.URL, "tok-olga")
}

// A full inbox refuses a message with 429 inbox_full, saying the limit;
// nothing is stored, and the process is unharmed.
func TestInboxFull(t *testing.T) {
	t.Parallel()
	_, ada, olga := serveNode(t, brain.Config{InboxLimit: 2})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()

	p, err := ada.CreateProcess(ctx, CreateRequest{Recipe: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := olga.Control(ctx, p.ID, "pause"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"one", "two"} {
		if _, err := ada.Send(ctx, p.ID, m, ""); err != nil {
			t.Fatalf("Send(%s): %v", m, err)
		}
	}
	_, err = ada.Send(ctx, p.ID, "three", "")
	wantAPIError(t, "a third message", err, http.StatusTooManyRequests, CodeInboxFull)
	if e := (*Error)(nil); errors.As(err, &e) && !strings.Contains(e.Message, "2 messages waiting") {
		t.Errorf("message %q does not say the limit", e.Message)
	}
	_, err = olga.Steer(ctx, p.ID, "hurry", "")
	wantAPIError(t, "steering", err, http.StatusTooManyRequests, CodeInboxFull)
	in, err := olga.Inbox(ctx, p.ID)
	if err != nil || len(in) != 2 || in[0].Content != "one" || in[1].Content != "two" || in[0].Kind != "user" || in[0].From != "user:ada" || in[0].ID == "" || in[0].At.IsZero() {
		t.Errorf("inbox = %+v, %v; want the two messages taken, from user:ada", in, err)
	}
	_, err = ada.Inbox(ctx, p.ID)
	wantAPIError(t, "a user reading the inbox", err, http.StatusForbidden, CodeForbidden)
	if p, err := olga.Control(ctx, p.ID, "resume"); err != nil || p.State != "READY" {
		t.Errorf("resume = %+v, %v; want READY, to read its inbox", p, err)
	}
}

// A user who has the most processes the server allows gets 429
// process_limit for another, saying the limit and what to do; deleting one
// makes room. Another user is not counted against her.
func TestProcessLimit(t *testing.T) {
	t.Parallel()
	_, ada, olga := serveNode(t, brain.Config{OwnerLimit: 2})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var ids []string
	for range 2 {
		p, err := ada.CreateProcess(ctx, CreateRequest{Recipe: "default"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	_, err := ada.CreateProcess(ctx, CreateRequest{Recipe: "default"})
	wantAPIError(t, "a third process", err, http.StatusTooManyRequests, CodeProcessLimit)
	if e := (*Error)(nil); errors.As(err, &e) && !strings.Contains(e.Message, "ada has the most processes the server allows one user (2,") {
		t.Errorf("message %q does not say whose limit and how many", e.Message)
	}
	if _, err := olga.CreateProcess(ctx, CreateRequest{Recipe: "default"}); err != nil {
		t.Errorf("another user's process: %v", err)
	}
	if _, err := ada.DeleteProcess(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := ada.CreateProcess(ctx, CreateRequest{Recipe: "default"}); err != nil {
		t.Errorf("a process once one was deleted: %v", err)
	}
}

// Timers on a real node: an operator arms them (in, at, cron), the owner
// lists them by due time, an operator cancels one; what cannot be armed
// is refused with what to fix.
func TestTimers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	node, ada, olga := serveNode(t, brain.Config{Clock: func() time.Time { return now }})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()

	p, err := ada.CreateProcess(ctx, CreateRequest{Recipe: "default"})
	if err != nil {
		t.Fatal(err)
	}
	daily, err := olga.ScheduleTimer(ctx, p.ID, TimerRequest{Cron: "0 9 * * *", Message: "daily report"})
	if err != nil || daily.Cron != "0 9 * * *" || daily.At != nil || !daily.Due.Equal(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("ScheduleTimer(cron) = %+v, %v; want due tomorrow at 9:00", daily, err)
	}
	soon, err := olga.ScheduleTimer(ctx, p.ID, TimerRequest{In: "10m", Message: "check the build"})
	if err != nil || soon.At == nil || !soon.Due.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("ScheduleTimer(in) = %+v, %v; want due in 10 minutes, once", soon, err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	noon, err := olga.ScheduleTimer(ctx, p.ID, TimerRequest{At: at.Format(time.RFC3339), Message: "lunch"})
	if err != nil || noon.At == nil || !noon.Due.Equal(at) {
		t.Fatalf("ScheduleTimer(at) = %+v, %v; want due at noon", noon, err)
	}
	list, err := ada.Timers(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tm := range list {
		ids = append(ids, tm.ID)
	}
	if want := []string{soon.ID, noon.ID, daily.ID}; !slices.Equal(ids, want) {
		t.Errorf("timers by due time = %v, want %v", ids, want)
	}

	_, err = olga.ScheduleTimer(ctx, p.ID, TimerRequest{Cron: "0 9 * *", Message: "report"})
	wantAPIError(t, "a cron of four fields", err, http.StatusUnprocessableEntity, CodeInvalidTimer)
	if e := (*Error)(nil); errors.As(err, &e) && !strings.Contains(e.Message, "write five fields") {
		t.Errorf("message %q does not say how to write a cron expression", e.Message)
	}
	_, err = ada.ScheduleTimer(ctx, p.ID, TimerRequest{In: "1m", Message: "mine"})
	wantAPIError(t, "a user arming a timer", err, http.StatusForbidden, CodeForbidden)

	if err := olga.CancelTimer(ctx, p.ID, noon.ID); err != nil {
		t.Fatalf("CancelTimer: %v", err)
	}
	err = olga.CancelTimer(ctx, p.ID, noon.ID)
	wantAPIError(t, "cancelling it again", err, http.StatusNotFound, CodeNotFound)
	if list, err := node.Timers(ctx, p.ID); err != nil || len(list) != 2 {
		t.Errorf("timers after the cancel = %+v, %v; want 2", list, err)
	}

	// The timer posts its message when due, as the tool's would.
	now = now.Add(11 * time.Minute)
	if n, err := node.FireDueTimers(ctx); err != nil || n != 1 {
		t.Fatalf("FireDueTimers = %d, %v; want 1", n, err)
	}
	if in, err := node.Store().Inbox(ctx, p.ID); err != nil || len(in) != 1 || in[0].Content != "check the build" || in[0].Kind != conversation.KindSchedule {
		t.Errorf("inbox = %+v, %v; want the schedule message", in, err)
	}
}

// A process's answer says what its model calls used, in all and on the
// day of its last calls, in GET and in the list: a turn of two calls here.
func TestTokens(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(turnScript))
	if err != nil {
		t.Fatal(err)
	}
	committed := make(chan store.Record, 1)
	node, c, _ := serveNode(t, brain.Config{
		Models:   map[string]llm.Model{"default": llmtest.WithUsage{Model: scripted.New(s), In: 1200, Out: 80}},
		OnCommit: func(rec store.Record, _ []conversation.Event) { committed <- rec }})
	if err := node.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()

	p, err := c.CreateProcess(ctx, CreateRequest{Recipe: "default", Input: "What is new?"})
	if err != nil || p.Tokens != nil {
		t.Fatalf("CreateProcess = %+v, %v; want no tokens yet", p, err)
	}
	var rec store.Record
	select {
	case rec = <-committed:
	case <-ctx.Done():
		t.Fatal("no turn committed")
	}
	if rec.Tokens.Day.IsZero() {
		t.Fatalf("the commit's record counts no day: %+v", rec.Tokens)
	}
	want := Tokens{Input: 2400, Output: 160, Day: rec.Tokens.Day.Format(time.DateOnly), DayTotal: 2560}
	if p, err := c.GetProcess(ctx, p.ID); err != nil || p.Tokens == nil || *p.Tokens != want {
		t.Errorf("GetProcess = %+v, %v; want tokens %+v", p, err, want)
	}
	page, err := c.ListProcesses(ctx, ProcessFilter{}, "", 10)
	if err != nil || len(page.Processes) != 1 || page.Processes[0].Tokens == nil || *page.Processes[0].Tokens != want {
		t.Errorf("ListProcesses = %+v, %v; want the process with tokens %+v", page, err, want)
	}
}
