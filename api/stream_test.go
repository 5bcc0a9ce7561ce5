package api

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
)

// waitTimeout bounds every wait of these tests; it never paces them.
const waitTimeout = 30 * time.Second

// frame is one server-sent event, or a comment.
type frame struct {
	id, event, data, comment string
}

// sseReader reads the frames of an event stream.
type sseReader struct {
	resp  *http.Response
	br    *bufio.Reader
	close func() // ends the stream, as a client that goes does
}

// openSSE opens an event stream; it is closed when the test ends.
func openSSE(t *testing.T, ts *httptest.Server, path, token string, header map[string]string) *sseReader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	closeStream := func() {
		cancel()
		resp.Body.Close()
	}
	t.Cleanup(closeStream)
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return &sseReader{resp: resp, br: bufio.NewReader(resp.Body), close: closeStream}
}

// next returns the next frame; io.EOF when the stream ended.
func (r *sseReader) next() (frame, error) {
	var f frame
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			return f, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return f, nil
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			f.comment = value
		case "id":
			f.id = value
		case "event":
			f.event = value
		case "data":
			f.data = value
		}
	}
}

// frame reads the next frame that is not a comment.
func (r *sseReader) frame(t *testing.T) frame {
	t.Helper()
	for {
		f, err := r.next()
		if err != nil {
			t.Fatalf("reading the next frame: %v", err)
		}
		if f.comment == "" {
			return f
		}
	}
}

// events reads n event frames, skipping comments, and checks each; a
// progress frame among them fails the test.
func (r *sseReader) events(t *testing.T, n int) []conversation.Event {
	t.Helper()
	var out []conversation.Event
	for len(out) < n {
		f, err := r.next()
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		if f.comment != "" {
			continue
		}
		if f.event == "progress" {
			t.Fatalf("after %d events: progress %s, want an event", len(out), f.data)
		}
		var e conversation.Event
		if err := json.Unmarshal([]byte(f.data), &e); err != nil {
			t.Fatalf("data %q: %v", f.data, err)
		}
		if f.id != e.ID || f.event != string(e.Type) {
			t.Errorf("frame id %q event %q; its data has id %q type %q", f.id, f.event, e.ID, e.Type)
		}
		out = append(out, e)
	}
	return out
}

func idsOf(evs []conversation.Event) string {
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = e.ID
	}
	return strings.Join(s, ",")
}

func sampleTurn() []conversation.Event {
	return []conversation.Event{
		conversation.NewTurnStart("wake"),
		conversation.NewStateChange("READY", "RUNNING", "wake"),
		conversation.NewInboxMessage("m1", conversation.KindUser, "user:alice", "hi"),
		conversation.NewInboxMessage("m2", conversation.KindOperator, "operator:olga", "be brief"),
		conversation.NewChatMessage("Hello."),
		conversation.NewStateChange("RUNNING", "BLOCKED", "await_user"),
	}
}

func serve(t *testing.T, b *bundle) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(b.h)
	t.Cleanup(ts.Close)
	return ts
}

func TestStreamBacklogThenLive(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = 5 * time.Millisecond })
	ts := serve(t, b)
	logged := b.fake.appendEvents("p_alice", sampleTurn()[:3]...)
	s := openSSE(t, ts, "/v1/processes/p_alice/events/stream?view=raw", tokOlga, nil)
	if ct, cc := s.resp.Header.Get("Content-Type"), s.resp.Header.Get("Cache-Control"); ct != "text/event-stream" || cc != "no-cache" {
		t.Errorf("Content-Type %q, Cache-Control %q", ct, cc)
	}
	if got := s.events(t, 3); idsOf(got) != idsOf(logged) {
		t.Errorf("backlog = %s, want %s", idsOf(got), idsOf(logged))
	}
	live := b.fake.appendEvents("p_alice", sampleTurn()[3:]...)
	if got := s.events(t, 3); idsOf(got) != idsOf(live) {
		t.Errorf("live = %s, want %s", idsOf(got), idsOf(live))
	}
}

// A stream resumes after Last-Event-ID (or after=), the header first.
func TestStreamResumes(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = 5 * time.Millisecond })
	ts := serve(t, b)
	logged := b.fake.appendEvents("p_alice", sampleTurn()...)
	for _, tc := range []struct {
		name, query string
		header      map[string]string
	}{
		{name: "header", header: map[string]string{"Last-Event-ID": logged[2].ID}},
		{name: "query", query: "&after=" + logged[2].ID},
		{name: "header first", query: "&after=" + logged[0].ID, header: map[string]string{"Last-Event-ID": logged[2].ID}},
	} {
		s := openSSE(t, ts, "/v1/processes/p_alice/events/stream?view=raw"+tc.query, tokOlga, tc.header)
		if got := s.events(t, 3); idsOf(got) != idsOf(logged[3:]) {
			t.Errorf("%s: got %s, want %s", tc.name, idsOf(got), idsOf(logged[3:]))
		}
	}
}

// The user view of a stream is conversation.UserView of each batch, with
// the log's ids; events it leaves out are never sent.
func TestStreamUserView(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = 5 * time.Millisecond })
	ts := serve(t, b)
	logged := b.fake.appendEvents("p_alice", sampleTurn()...)
	want := conversation.UserView(logged)
	s := openSSE(t, ts, "/v1/processes/p_alice/events/stream", tokAlice, nil)
	if got := s.events(t, len(want)); idsOf(got) != idsOf(want) {
		t.Errorf("user view = %s, want %s", idsOf(got), idsOf(want))
	}
	live := b.fake.appendEvents("p_alice",
		conversation.NewStateChange("BLOCKED", "READY", "user_input"),
		conversation.NewReasoning("thinking", "", nil),
		conversation.NewChatMessage("Shown."),
	)
	got := s.events(t, 1)
	if got[0].ID != live[2].ID || got[0].ChatResponse.Text != "Shown." {
		t.Errorf("next user event = %s %+v, want %s (the two before it left out)", got[0].ID, got[0].ChatResponse, live[2].ID)
	}
}

func TestStreamHeartbeat(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.Heartbeat = time.Millisecond; c.FollowBlock = 2 * time.Millisecond })
	ts := serve(t, b)
	s := openSSE(t, ts, "/v1/processes/p_alice/events/stream", tokAlice, nil)
	f, err := s.next()
	if err != nil {
		t.Fatal(err)
	}
	if f.comment != "heartbeat" || f.id != "" || f.data != "" {
		t.Errorf("first frame of an idle stream = %+v, want the heartbeat comment", f)
	}
}

// The stream ends when the process is gone.
func TestStreamEndsWhenProcessGone(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.Heartbeat = time.Millisecond; c.FollowBlock = 2 * time.Millisecond })
	ts := serve(t, b)
	s := openSSE(t, ts, "/v1/processes/p_alice/events/stream", tokAlice, nil)
	if _, err := s.next(); err != nil { // the stream is running
		t.Fatal(err)
	}
	b.fake.remove("p_alice")
	for {
		_, err := s.next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("stream failed instead of ending: %v", err)
		}
	}
}
