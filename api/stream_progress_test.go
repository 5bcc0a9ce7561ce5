package api

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/live"
)

// longBlock is a FollowBlock longer than any wait of these tests: a stream
// that wrote progress only between two reads of the log would write none
// in time.
const longBlock = 4 * waitTimeout

// progress reads the next frame that is not a comment and checks that it
// is a progress update without an id.
func (r *sseReader) progress(t *testing.T) live.Update {
	t.Helper()
	f := r.frame(t)
	if f.event != "progress" || f.id != "" {
		t.Fatalf("frame event %q id %q data %s, want progress with no id", f.event, f.id, f.data)
	}
	var u live.Update
	if err := json.Unmarshal([]byte(f.data), &u); err != nil {
		t.Fatalf("progress data %q: %v", f.data, err)
	}
	return u
}

// awaitWatches waits until the fake has n watches of pid's progress.
func (b *bundle) awaitWatches(t *testing.T, pid string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := b.fake.awaitWatches(ctx, pid, n); err != nil {
		t.Fatal(err)
	}
}

// update is a progress update of p_alice's turn t1.
func update(kind live.Kind, round int, user bool, edit ...func(*live.Update)) live.Update {
	u := live.Update{Process: "p_alice", Turn: "t1", Round: round, Kind: kind, At: fakeNow, User: user}
	for _, e := range edit {
		e(&u)
	}
	return u
}

func delta(text string, offset int) func(*live.Update) {
	return func(u *live.Update) { u.Delta, u.Offset = text, offset }
}

func tool(name, call string) func(*live.Update) {
	return func(u *live.Update) { u.Tool, u.CallID = name, call }
}

// Progress comes between the events as it is published, while the stream
// waits for the log (FollowBlock outlasts the test), each as a progress
// frame with no id.
func TestStreamProgressBetweenEvents(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = longBlock })
	ts := serve(t, b)
	turn := sampleTurn()
	logged := b.fake.appendEvents("p_alice", turn[:3]...)
	s := openSSE(t, ts, "/v1/processes/p_alice/events/stream?view=raw", tokOlga, nil)
	if got := s.events(t, 3); idsOf(got) != idsOf(logged) {
		t.Fatalf("backlog = %s, want %s", idsOf(got), idsOf(logged))
	}
	b.awaitWatches(t, "p_alice", 1)

	round := update(live.RoundStarted, 1, true)
	started := update(live.ToolStarted, 1, false, tool("http_fetch", "call_1"))
	b.fake.publish(round, started)
	for _, want := range []live.Update{round, started} {
		if diff := cmp.Diff(want, s.progress(t)); diff != "" {
			t.Errorf("progress (-want +got):\n%s", diff)
		}
	}
	steered := b.fake.appendEvents("p_alice", turn[3])
	if got := s.events(t, 1); idsOf(got) != idsOf(steered) {
		t.Errorf("event after the progress = %s, want %s", idsOf(got), idsOf(steered))
	}
	answer := update(live.Answer, 2, true, delta("Hel", 0))
	b.fake.publish(answer)
	if diff := cmp.Diff(answer, s.progress(t)); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	rest := b.fake.appendEvents("p_alice", turn[4:]...)
	if got := s.events(t, 2); idsOf(got) != idsOf(rest) {
		t.Errorf("events after the progress = %s, want %s", idsOf(got), idsOf(rest))
	}
}

// The user view gets only the updates whose User is set: not the tools,
// nor the model's text to itself. The raw view gets them all.
func TestStreamProgressUserView(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = longBlock })
	ts := serve(t, b)
	b.fake.appendEvents("p_alice", sampleTurn()[:2]...)
	user := openSSE(t, ts, "/v1/processes/p_alice/events/stream", tokAlice, nil)
	raw := openSSE(t, ts, "/v1/processes/p_alice/events/stream?view=raw", tokOlga, nil)
	user.events(t, 1)
	raw.events(t, 2)
	b.awaitWatches(t, "p_alice", 2)

	all := []live.Update{
		update(live.RoundStarted, 1, true),
		update(live.Text, 1, false, delta("I should fetch it.", 0)),
		update(live.ToolStarted, 1, false, tool("http_fetch", "call_1")),
		update(live.ToolFinished, 1, false, tool("http_fetch", "call_1"), func(u *live.Update) { u.IsError = true }),
		update(live.RoundStarted, 2, true),
		update(live.Answer, 2, true, delta("Here", 0)),
	}
	b.fake.publish(all...)
	var got []live.Update
	for range 3 {
		got = append(got, user.progress(t))
	}
	if diff := cmp.Diff([]live.Update{all[0], all[4], all[5]}, got); diff != "" {
		t.Errorf("the user view's progress (-want +got):\n%s", diff)
	}
	got = got[:0]
	for range all {
		got = append(got, raw.progress(t))
	}
	if diff := cmp.Diff(all, got); diff != "" {
		t.Errorf("the raw view's progress (-want +got):\n%s", diff)
	}
	// Nothing more came to the user: the next frame is the next event.
	next := b.fake.appendEvents("p_alice", conversation.NewChatMessage("Here it is."))
	if got := user.events(t, 1); idsOf(got) != idsOf(next) {
		t.Errorf("the user's next frame = %s, want the event %s", idsOf(got), idsOf(next))
	}
}

// A stream resumed with Last-Event-ID gets every event after it, and of
// the progress only what is published once it watches again: none of what
// the first connection got, nor what was published in between.
func TestStreamProgressResume(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = longBlock })
	ts := serve(t, b)
	turn := sampleTurn()
	b.fake.appendEvents("p_alice", turn[:3]...)
	first := openSSE(t, ts, "/v1/processes/p_alice/events/stream?view=raw", tokOlga, nil)
	first.events(t, 3)
	b.awaitWatches(t, "p_alice", 1)
	b.fake.publish(update(live.Answer, 1, true, delta("Hel", 0)))
	first.progress(t)
	last := b.fake.appendEvents("p_alice", turn[3])[0]
	if got := first.events(t, 1); got[0].ID != last.ID {
		t.Fatalf("event = %s, want %s", got[0].ID, last.ID)
	}
	first.close()
	b.awaitWatches(t, "p_alice", 0) // the server let go of its watch

	b.fake.publish(update(live.Answer, 1, true, delta("lo", 3))) // nobody watches
	missed := b.fake.appendEvents("p_alice", turn[4:]...)
	again := openSSE(t, ts, "/v1/processes/p_alice/events/stream?view=raw", tokOlga, map[string]string{"Last-Event-ID": last.ID})
	if got := again.events(t, len(missed)); idsOf(got) != idsOf(missed) {
		t.Errorf("resumed = %s, want %s", idsOf(got), idsOf(missed))
	}
	b.awaitWatches(t, "p_alice", 1)
	fresh := update(live.RoundStarted, 2, true)
	b.fake.publish(fresh)
	if diff := cmp.Diff(fresh, again.progress(t)); diff != "" {
		t.Errorf("the resumed stream's first progress (-want +got):\n%s", diff)
	}
}

// progress=0 asks for the durable events only: the stream watches nothing.
func TestStreamProgressOptOut(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FollowBlock = longBlock })
	ts := serve(t, b)
	first := b.fake.appendEvents("p_alice", sampleTurn()[0])
	s := openSSE(t, ts, "/v1/processes/p_alice/events/stream?view=raw&progress=0", tokOlga, nil)
	s.events(t, 1) // the backlog
	second := b.fake.appendEvents("p_alice", sampleTurn()[1])
	s.events(t, 1) // after the backlog: the stream would be watching by now
	b.fake.mu.Lock()
	watches := len(b.fake.watches["p_alice"])
	b.fake.mu.Unlock()
	if watches != 0 {
		t.Errorf("a stream with progress=0 has %d watches, want none", watches)
	}
	b.fake.publish(update(live.RoundStarted, 1, true))
	next := b.fake.appendEvents("p_alice", sampleTurn()[2])
	if got := s.events(t, 1); got[0].ID != next[0].ID {
		t.Errorf("after %s and %s: %s, want %s", first[0].ID, second[0].ID, got[0].ID, next[0].ID)
	}
}

// A watch that fails, or ends, does not end the stream: the events go on,
// the failure is logged, and the progress is watched again at a heartbeat.
func TestStreamProgressWatchFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// fail makes the watch fail: refused before the stream opens, or
		// ended once the stream watches.
		refuse bool
		warn   string
	}{
		{name: "watch refused", refuse: true,
			warn: "progress watch failed; the events go on, and it is tried again at each heartbeat"},
		{name: "watch ended",
			warn: "progress watch ended; the events go on, and it is watched again at the next heartbeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(c *Config) { c.FollowBlock = longBlock; c.Heartbeat = time.Millisecond })
			ts := serve(t, b)
			if tc.refuse {
				b.fake.setWatchErr(errors.New("pub/sub down"))
			}
			s := openSSE(t, ts, "/v1/processes/p_alice/events/stream?view=raw", tokOlga, nil)
			if !tc.refuse {
				b.awaitWatches(t, "p_alice", 1)
				b.fake.endWatches("p_alice")
			}
			logged := b.fake.appendEvents("p_alice", sampleTurn()...)
			if got := s.events(t, len(logged)); idsOf(got) != idsOf(logged) {
				t.Errorf("events = %s, want %s", idsOf(got), idsOf(logged))
			}

			if tc.refuse { // the stream tried, and logged the failure before its next try
				ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
				err := b.fake.awaitRefused(ctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
			}
			b.fake.setWatchErr(nil)
			b.awaitWatches(t, "p_alice", 1) // at a heartbeat, after the failure was logged
			if n := b.logs.FilterMessage(tc.warn).Len(); n != 1 {
				t.Errorf("%d warnings %q, want 1", n, tc.warn)
			}
			u := update(live.RoundStarted, 1, true)
			b.fake.publish(u)
			if diff := cmp.Diff(u, s.progress(t)); diff != "" {
				t.Errorf("progress once watched again (-want +got):\n%s", diff)
			}
		})
	}
}
