package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
)

// wantAPIError checks that err is the server's *Error with status and code.
func wantAPIError(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != status || e.Code != code {
		t.Errorf("%s: error %v, want *Error %d %s", what, err, status, code)
	}
}

func TestClient(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ts := serve(t, b)
	ctx := context.Background()
	alice, olga := NewClient(ts.URL+"/", tokAlice), NewClient(ts.URL, tokOlga)

	p, err := alice.CreateProcess(ctx, CreateRequest{Recipe: "default", Metadata: map[string]string{"k": "v"}})
	if err != nil || p.State != "BLOCKED" || p.Owner != "alice" || p.Metadata["k"] != "v" {
		t.Fatalf("CreateProcess = %+v, %v", p, err)
	}
	got, err := alice.GetProcess(ctx, p.ID)
	if err != nil || got.Inbox == nil || *got.Inbox != 0 {
		t.Errorf("GetProcess = %+v, %v; want an inbox of 0", got, err)
	}
	if got.Inbox = nil; !cmp.Equal(got, p) {
		t.Errorf("GetProcess = %+v; want %+v", got, p)
	}
	id1, err := alice.Send(ctx, p.ID, "hello", "key-1")
	if err != nil || id1 == "" {
		t.Fatalf("Send = %q, %v", id1, err)
	}
	if id2, err := alice.Send(ctx, p.ID, "hello", "key-1"); err != nil || id2 != id1 {
		t.Errorf("Send again with the key = %q, %v; want %q", id2, err, id1)
	}
	if _, err := olga.Steer(ctx, p.ID, "be brief", ""); err != nil {
		t.Errorf("Steer: %v", err)
	}
	page, err := olga.Events(ctx, p.ID, "raw", "", 0)
	if err != nil || len(page.Events) != 2 || page.Next != page.Events[1].ID {
		t.Errorf("Events raw = %+v, %v; want the two messages", page, err)
	}
	if page, err := alice.Events(ctx, p.ID, "", "", 10); err != nil || len(page.Events) != 1 || page.Events[0].InboxMessage.Content != "hello" {
		t.Errorf("Events user = %+v, %v; want alice's message", page, err)
	}
	for _, step := range []struct{ action, state string }{{"pause", "PAUSED"}, {"resume", "READY"}, {"stop", "DONE"}} {
		if got, err := olga.Control(ctx, p.ID, step.action); err != nil || got.State != step.state {
			t.Errorf("Control %s = %+v, %v; want %s", step.action, got, err, step.state)
		}
	}
	procs, err := alice.ListProcesses(ctx, ProcessFilter{State: "done"}, "", 1)
	if err != nil || len(procs.Processes) != 1 || procs.Processes[0].ID != "p_done" || procs.Next == "" {
		t.Fatalf("ListProcesses = %+v, %v; want a first page with p_done", procs, err)
	}
	more, err := alice.ListProcesses(ctx, ProcessFilter{State: "DONE"}, procs.Next, 1)
	if err != nil || len(more.Processes) != 1 || more.Processes[0].ID != p.ID || more.Next != "" {
		t.Errorf("ListProcesses page 2 = %+v, %v; want the last page with %s", more, err, p.ID)
	}

	// The server's errors.
	_, err = alice.GetProcess(ctx, "p_bob")
	wantAPIError(t, "another user's process", err, 404, CodeNotFound)
	_, err = alice.Steer(ctx, "p_alice", "x", "")
	wantAPIError(t, "user steers", err, 403, CodeForbidden)
	_, err = olga.Control(ctx, p.ID, "resume")
	wantAPIError(t, "resume a done process", err, 409, CodeInvalidState)
	_, err = alice.Send(ctx, p.ID, "late", "")
	wantAPIError(t, "message a done process", err, 409, CodeProcessClosed)
	_, err = alice.Send(ctx, "p_alice", "  ", "")
	wantAPIError(t, "blank message", err, 422, CodeEmptyContent)
	_, err = alice.CreateProcess(ctx, CreateRequest{Recipe: "nope"})
	wantAPIError(t, "unknown recipe", err, 422, CodeUnknownRecipe)
	_, err = NewClient(ts.URL, "wrong").ListProcesses(ctx, ProcessFilter{}, "", 0)
	wantAPIError(t, "bad token", err, 401, CodeUnauthorized)
	if _, err := olga.Control(ctx, p.ID, "explode"); err == nil || errors.As(err, new(*Error)) {
		t.Errorf("Control explode: %v; want a local error", err)
	}

	// Recipes, resolved, survive the trip through JSON.
	ford, err := alice.GetRecipe(ctx, "ford")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := b.fake.lib.Get("ford")
	if diff := cmp.Diff(want, ford); diff != "" {
		t.Errorf("GetRecipe ford (-server +client):\n%s", diff)
	}
	if list, err := alice.ListRecipes(ctx); err != nil || len(list.Recipes) != len(b.fake.lib.Names()) {
		t.Errorf("ListRecipes = %+v, %v", list, err)
	}
	_, err = olga.ReloadRecipes(ctx)
	wantAPIError(t, "reload as operator", err, 403, CodeForbidden)
}

// An answer that is not an API error (a proxy's page) is still an *Error.
// A message refused as busy reaches the client as the server's *Error,
// which matches ErrBusy (inbox.ErrBusy), so that a caller can tell it from
// other refusals and send the message again later; no other matches it.
func TestClientBusy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.addSteered("p_busy", "alice", lifecycle.Status{State: lifecycle.Running}, inbox.SteeringReject)
	alice := NewClient(serve(t, b).URL, tokAlice)
	_, err := alice.Send(context.Background(), "p_busy", "and?", "k1")
	wantAPIError(t, "a message to a busy process", err, http.StatusConflict, CodeBusy)
	if !errors.Is(err, ErrBusy) || !errors.Is(err, inbox.ErrBusy) {
		t.Errorf("a message to a busy process: %v does not match ErrBusy", err)
	}
	_, err = alice.Send(context.Background(), "p_done", "hello", "")
	wantAPIError(t, "a message to a closed process", err, http.StatusConflict, CodeProcessClosed)
	if errors.Is(err, ErrBusy) {
		t.Errorf("a message to a closed process: %v matches ErrBusy", err)
	}
}

func TestClientForeignError(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))
	defer ts.Close()
	_, err := NewClient(ts.URL, "t").GetProcess(context.Background(), "p")
	var e *Error
	if !errors.As(err, &e) || e.Status != 502 || e.Code != "http_502" || e.Message != "upstream down" {
		t.Errorf("error %#v, want *Error 502 http_502 upstream down", err)
	}
}

// dropper aborts the first event stream after it has written n events, as
// a dropped connection would, and records the Last-Event-ID of every stream
// request.
type dropper struct {
	next http.Handler
	n    int

	mu      sync.Mutex
	streams int
	lastIDs []string
}

func (d *dropper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/events/stream") {
		d.mu.Lock()
		d.streams++
		first := d.streams == 1
		d.lastIDs = append(d.lastIDs, r.Header.Get("Last-Event-ID"))
		d.mu.Unlock()
		if first {
			w = &abortAfter{ResponseWriter: w, left: d.n}
		}
	}
	d.next.ServeHTTP(w, r)
}

// abortAfter lets left event frames through, then aborts the response.
type abortAfter struct {
	http.ResponseWriter
	left int
}

func (a *abortAfter) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, []byte("id: ")) {
		if a.left == 0 {
			// What was written reaches the client; then the connection drops.
			_ = http.NewResponseController(a.ResponseWriter).Flush()
			panic(http.ErrAbortHandler)
		}
		a.left--
	}
	return a.ResponseWriter.Write(b)
}

func (a *abortAfter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// Stream reconnects a dropped connection with Last-Event-ID and delivers
// every event once.
func TestClientStreamReconnects(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = 5 * time.Millisecond })
	d := &dropper{next: b.h, n: 2}
	ts := httptest.NewServer(d)
	defer ts.Close()
	logged := b.fake.appendEvents("p_alice", sampleTurn()...)

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	stop := errors.New("seen them all")
	var got []conversation.Event
	err := NewClient(ts.URL, tokOlga).Stream(ctx, "p_alice", "raw", "", func(e conversation.Event) error {
		got = append(got, e)
		if len(got) == len(logged) {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Stream: %v", err)
	}
	if idsOf(got) != idsOf(logged) {
		t.Errorf("events = %s, want %s", idsOf(got), idsOf(logged))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if want := []string{"", logged[1].ID}; !cmp.Equal(d.lastIDs, want) {
		t.Errorf("Last-Event-ID of the stream requests = %q, want %q", d.lastIDs, want)
	}
}

func TestClientStreamEnds(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = 5 * time.Millisecond })
	ts := serve(t, b)
	never := func(conversation.Event) error { return nil }

	err := NewClient(ts.URL, tokAlice).Stream(context.Background(), "p_bob", "", "", never)
	wantAPIError(t, "another user's stream", err, 404, CodeNotFound)
	err = NewClient(ts.URL, tokAlice).Stream(context.Background(), "p_alice", "raw", "", never)
	wantAPIError(t, "raw stream as user", err, 403, CodeForbidden)

	// Cancelled while waiting for events: the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	b.fake.appendEvents("p_alice", conversation.NewTurnStart("wake"))
	err = NewClient(ts.URL, tokAlice).Stream(ctx, "p_alice", "", "", func(conversation.Event) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Stream after cancel: %v, want context.Canceled", err)
	}
}

// Send with an idempotency key tries again while the server cannot store
// the message just now, with the same key; without a key it does not, as
// the first try may have stored the message.
func TestClientSendRetries(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		if n%3 != 0 { // two refusals, then the message is taken
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"try again"}}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"message_id":"1-0"}`))
	}))
	defer ts.Close()
	sent := func() []string { // and forget them
		mu.Lock()
		defer mu.Unlock()
		k := keys
		keys = nil
		return k
	}
	c := NewClient(ts.URL, "t")
	id, err := c.Send(context.Background(), "p", "hello", "k1")
	if k := sent(); err != nil || id != "1-0" || !slices.Equal(k, []string{"k1", "k1", "k1"}) {
		t.Errorf("Send with a key: %q, %v after tries with keys %q; want 1-0 on the third try, each with k1", id, err, k)
	}
	_, err = c.Send(context.Background(), "p", "hello", "")
	var e *Error
	if k := sent(); !errors.As(err, &e) || e.Code != CodeUnavailable || len(k) != 1 {
		t.Errorf("Send without a key: %v after %d tries; want the 503 after one", err, len(k))
	}
}

// A failure that cannot pass by itself is not tried again, even with an
// idempotency key: a certificate the client does not trust (one TLS
// connection, not six), a server URL of another scheme, a cancelled
// context. A connection refused is tried again.
func TestClientRetriesOnlyTransientFailures(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes it refuses
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.StartTLS()
	defer ts.Close()
	if _, err := NewClient(ts.URL, "t").Send(context.Background(), "p", "hello", "k1"); err == nil || conns.Load() != 1 {
		t.Errorf("Send to an untrusted certificate: %v after %d connections; want an error after one", err, conns.Load())
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"another scheme", &url.Error{Op: "Post", URL: "ftp://x", Err: errors.New(`unsupported protocol scheme "ftp"`)}, false},
		{"cancelled", &url.Error{Op: "Post", URL: "http://x", Err: context.Canceled}, false},
		{"refused", &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, true},
		{"closed without an answer", &url.Error{Op: "Post", URL: "http://x", Err: io.EOF}, true},
		{"a 503", &Error{Status: http.StatusServiceUnavailable}, true},
		{"a 400", &Error{Status: http.StatusBadRequest}, false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("transient(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
