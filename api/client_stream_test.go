package api

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/live"
)

// streamed is what a Stream handed its callbacks: an event or an update.
type streamed struct {
	event    string // the event's id
	progress *live.Update
}

// streamInto runs Stream with WithProgress (unless noProgress) until the
// test ends, sending what it hands on to the channel it returns.
func streamInto(t *testing.T, c *Client, pid, view string, noProgress bool) <-chan streamed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan streamed)
	done := make(chan error, 1)
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Stream: %v, want it cancelled", err)
		}
	})
	send := func(s streamed) error {
		select {
		case out <- s:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var opts []StreamOption
	if !noProgress {
		opts = append(opts, WithProgress(func(u live.Update) error { return send(streamed{progress: &u}) }))
	}
	go func() {
		done <- c.Stream(ctx, pid, view, "", func(e conversation.Event) error { return send(streamed{event: e.ID}) }, opts...)
	}()
	return out
}

// nextStreamed returns what the stream handed on next.
func nextStreamed(t *testing.T, from <-chan streamed) streamed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	select {
	case s := <-from:
		return s
	case <-ctx.Done():
		t.Fatal("nothing streamed within", waitTimeout)
		return streamed{}
	}
}

// WithProgress hands on the progress updates between the events, in the
// order they came; the user view's come filtered by the server.
func TestClientStreamProgress(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = longBlock })
	ts := serve(t, b)
	logged := b.fake.appendEvents("p_alice", sampleTurn()[:2]...)
	raw := streamInto(t, NewClient(ts.URL, tokOlga), "p_alice", "raw", false)
	user := streamInto(t, NewClient(ts.URL, tokAlice), "p_alice", "user", false)
	for _, e := range logged {
		if got := nextStreamed(t, raw); got.event != e.ID {
			t.Fatalf("raw backlog: %+v, want event %s", got, e.ID)
		}
	}
	if got := nextStreamed(t, user); got.event != logged[0].ID { // the turn start
		t.Fatalf("user backlog: %+v, want event %s", got, logged[0].ID)
	}
	b.awaitWatches(t, "p_alice", 2)

	started := update(live.ToolStarted, 1, false, tool("http_fetch", "call_1"))
	answer := update(live.Answer, 2, true, delta("Hel", 0))
	b.fake.publish(started, answer)
	for _, want := range []live.Update{started, answer} {
		got := nextStreamed(t, raw)
		if got.progress == nil {
			t.Fatalf("raw: event %s, want progress %s", got.event, want.Kind)
		}
		if diff := cmp.Diff(want, *got.progress); diff != "" {
			t.Errorf("raw progress (-want +got):\n%s", diff)
		}
	}
	if got := nextStreamed(t, user); got.progress == nil || cmp.Diff(answer, *got.progress) != "" {
		t.Errorf("user: %+v, want the answer's progress alone", got)
	}
	more := b.fake.appendEvents("p_alice", conversation.NewChatMessage("Hello."))
	for name, from := range map[string]<-chan streamed{"raw": raw, "user": user} {
		if got := nextStreamed(t, from); got.event != more[0].ID {
			t.Errorf("%s: %+v, want event %s", name, got, more[0].ID)
		}
	}
}

// Without WithProgress, Stream asks for none: the server watches nothing.
func TestClientStreamWithoutProgress(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = longBlock })
	ts := serve(t, b)
	backlog := b.fake.appendEvents("p_alice", sampleTurn()[0])
	from := streamInto(t, NewClient(ts.URL, tokOlga), "p_alice", "raw", true)
	if got := nextStreamed(t, from); got.event != backlog[0].ID {
		t.Fatalf("%+v, want event %s", got, backlog[0].ID)
	}
	logged := b.fake.appendEvents("p_alice", sampleTurn()[1])
	if got := nextStreamed(t, from); got.event != logged[0].ID { // after the backlog: it would be watching by now
		t.Fatalf("%+v, want event %s", got, logged[0].ID)
	}
	b.fake.mu.Lock()
	watches := len(b.fake.watches["p_alice"])
	b.fake.mu.Unlock()
	if watches != 0 {
		t.Errorf("a Stream without WithProgress made %d watches, want none", watches)
	}
}

// readEvents hands a progress frame to progress, or drops it when
// progress is nil; either way it does not move the last event id, so a
// reconnect resumes after the last durable event.
func TestReadEventsProgress(t *testing.T) {
	t.Parallel()
	const body = "id: 1-0\nevent: turn_start\ndata: {\"id\":\"1-0\",\"type\":\"turn_start\"}\n\n" +
		"event: progress\ndata: {\"process\":\"p\",\"turn\":\"t1\",\"round\":1,\"kind\":\"answer\",\"at\":\"2026-01-01T00:00:00Z\",\"delta\":\"Hi\",\"user\":true}\n\n" +
		": heartbeat\n\n" +
		"event: progress\ndata: {\"process\":\"p\",\"turn\":\"t1\",\"round\":1,\"kind\":\"answer\",\"at\":\"2026-01-01T00:00:00Z\",\"delta\":\"!\",\"offset\":2,\"user\":true}\n\n"
	for _, withProgress := range []bool{true, false} {
		var got []string
		var progress func(live.Update) error
		if withProgress {
			progress = func(u live.Update) error {
				got = append(got, "progress "+u.Delta)
				return nil
			}
		}
		last, err := readEvents(strings.NewReader(body), "", func(e conversation.Event) error {
			got = append(got, "event "+e.ID)
			return nil
		}, progress)
		want := []string{"event 1-0"}
		if withProgress {
			want = append(want, "progress Hi", "progress !")
		}
		if err != nil || last != "1-0" || !cmp.Equal(got, want) {
			t.Errorf("with progress %v: handed on %q, last id %q, %v; want %q, 1-0", withProgress, got, last, err, want)
		}
	}
	stop := errors.New("enough")
	_, err := readEvents(strings.NewReader(body), "", func(conversation.Event) error { return nil }, func(live.Update) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("a progress callback's error: readEvents returned %v, want it", err)
	}
	_, err = readEvents(strings.NewReader("event: progress\ndata: {nope\n\n"), "", nil, func(live.Update) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "api: progress update") {
		t.Errorf("an update that does not decode: %v, want an error saying so", err)
	}
}
