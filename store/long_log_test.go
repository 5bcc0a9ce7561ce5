package store_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// chats returns n chat events.
func chats(n int) []conversation.Event {
	evs := make([]conversation.Event, n)
	for i := range evs {
		evs[i] = chat(fmt.Sprint(i))
	}
	return evs
}

// A claim of a log longer than a page reads its newest HistoryPage events
// and says that it omits the rest; LogBefore reads further back.
func TestClaimOfALongLog(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("first")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	if err := e.s.Checkpoint(e.ctx, c, chats(2*store.HistoryPage)); err != nil {
		t.Fatal(err)
	}
	e.commit(t, c, lifecycle.AwaitUser)
	e.post(t, "p1", user("second"))
	r := e.claim(t, "p1", "t2")

	log := e.log(t, "p1")
	start := len(log) - len(r.Current)
	first := start - len(r.History)
	if !r.HistoryOmitted || len(r.History)+len(r.Current) != store.HistoryPage {
		t.Fatalf("claim: omitted %v, %d events of History and %d of Current; want omitted, %d in all",
			r.HistoryOmitted, len(r.History), len(r.Current), store.HistoryPage)
	}
	if !sameJSON(t, log[first:start], r.History) || !sameJSON(t, log[start:], r.Current) {
		t.Errorf("History and Current are not the newest events of the log:\nhistory %q\ncurrent %q", describe(r.History), describe(r.Current))
	}

	older, more, err := e.s.LogBefore(e.ctx, "p1", r.History[0].ID, 10)
	if err != nil || !more || !sameJSON(t, log[first-10:first], older) {
		t.Errorf("LogBefore the History: %q, more %v, %v; want the 10 events before it, more", describe(older), more, err)
	}
	older, more, err = e.s.LogBefore(e.ctx, "p1", log[3].ID, 10)
	if err != nil || more || !sameJSON(t, log[:3], older) {
		t.Errorf("LogBefore the 4th event: %q, more %v, %v; want the first 3, no more", describe(older), more, err)
	}
	newest, more, err := e.s.LogBefore(e.ctx, "p1", "", 3)
	if err != nil || !more || !slices.Equal(describe(newest), describe(log[len(log)-3:])) {
		t.Errorf("LogBefore the end: %q, more %v, %v; want the log's last 3 events, more", describe(newest), more, err)
	}
	if _, _, err := e.s.LogBefore(e.ctx, "p1", log[3].ID, 0); err == nil {
		t.Error("LogBefore of 0 events: no error")
	}
	if _, _, err := e.s.LogBefore(e.ctx, "no such id", log[3].ID, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LogBefore of a malformed process id: %v, want ErrNotFound", err)
	}
}

// A turn recovered from a dead node gets back all its checkpointed events,
// however many, and a drain of more messages than a page holds them all.
func TestClaimOfALongTurn(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("first")
	e.create(t, "p1", &in)
	c := e.claim(t, "p1", "t1")
	half := chats(2 * store.HistoryPage)
	if err := e.s.Checkpoint(e.ctx, c, half); err != nil {
		t.Fatal(err)
	}
	e.rdb.Del(e.ctx, e.key("p1", "lease")) // n1 died
	stale, err := e.s.ClaimStaleWakes(e.ctx, "n2", []string{engine}, 0, 10)
	if err != nil || len(stale) != 1 {
		t.Fatalf("ClaimStaleWakes = %v, %v; want the turn's wake", stale, err)
	}
	r, err := e.s.Claim(e.ctx, stale[0], "n2", "t9")
	if err != nil {
		t.Fatal(err)
	}
	log := e.log(t, "p1")
	start := len(log) - len(r.Current)
	if got := describe(r.Current[:1]); !r.Recovered || got[0] != "turn_start wake [t1]" || len(r.Current) != 3+len(half)+2 {
		t.Errorf("recovery: recovered %v, Current starts %q and holds %d events; want t1's turn_start and %d",
			r.Recovered, got, len(r.Current), 3+len(half)+2)
	}
	if r.HistoryOmitted || !sameJSON(t, log[:start], r.History) || !sameJSON(t, log[start:], r.Current) {
		t.Errorf("recovery: omitted %v; History and Current are not the log", r.HistoryOmitted)
	}

	e.commit(t, r, lifecycle.AwaitUser)
	msgs := store.HistoryPage + 10
	for i := range msgs {
		e.post(t, "p1", user(fmt.Sprint("message ", i)))
	}
	r = e.claim(t, "p1", "t2")
	log = e.log(t, "p1")
	start = len(log) - len(r.Current)
	if len(r.Current) != 2+msgs || !sameJSON(t, log[start:], r.Current) {
		t.Errorf("a drain of %d messages: Current holds %d events, want the turn's start, its wake and every message", msgs, len(r.Current))
	}
	// The page read after the claim held only its own events: none before
	// them is read, and LogBefore reads them.
	if !r.HistoryOmitted || len(r.History) != 0 {
		t.Errorf("after a long drain: omitted %v, %d events of History; want omitted, none", r.HistoryOmitted, len(r.History))
	}
	older, _, err := e.s.LogBefore(e.ctx, "p1", r.Current[0].ID, 5)
	if err != nil || !sameJSON(t, log[start-5:start], older) {
		t.Errorf("LogBefore the long drain: %q, %v; want the 5 events before its turn", describe(older), err)
	}
}

// A commit trims a log longer than the claim's KeepEvents from its oldest
// end, in whole blocks of the stream, never below KeepEvents, and counts
// what it removed in the record; a claim of a trimmed log says that its
// History omits the beginning, however short it is.
func TestCommitTrimsTheLog(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const keep = 40
	in := user("first")
	e.create(t, "p1", &in)
	for turn := range 12 {
		if turn > 0 {
			e.post(t, "p1", user(fmt.Sprint("message ", turn)))
		}
		c := e.claim(t, "p1", fmt.Sprint("t", turn))
		c.KeepEvents = keep
		if turn > 0 && c.HistoryOmitted != (c.Record.Trimmed > 0) {
			t.Errorf("claim %d: HistoryOmitted %v with %d events trimmed", turn, c.HistoryOmitted, c.Record.Trimmed)
		}
		if err := e.s.Checkpoint(e.ctx, c, chats(8)); err != nil {
			t.Fatal(err)
		}
		before, err := e.rdb.XLen(e.ctx, e.key("p1", "events")).Result()
		if err != nil {
			t.Fatal(err)
		}
		rec := e.commit(t, c, lifecycle.AwaitUser, chat("answer"))
		log := e.log(t, "p1")
		written := int(c.Record.Trimmed) + int(before) + 2 // the answer and the state change
		if got := int(rec.Trimmed) + len(log); got != written {
			t.Fatalf("turn %d: %d trimmed + %d in the log = %d; want the %d written", turn, rec.Trimmed, len(log), got, written)
		}
		if len(log) < keep && rec.Trimmed > c.Record.Trimmed {
			t.Fatalf("turn %d: trimmed to %d events; want at least %d", turn, len(log), keep)
		}
		if got := e.get(t, "p1").Trimmed; got != rec.Trimmed {
			t.Fatalf("turn %d: the record says %d trimmed, the commit %d", turn, got, rec.Trimmed)
		}
	}
	rec := e.get(t, "p1")
	if rec.Trimmed == 0 || len(e.log(t, "p1")) > 2*keep {
		t.Errorf("after 12 turns of 13 events: %d trimmed, %d kept; want the log near %d", rec.Trimmed, len(e.log(t, "p1")), keep)
	}

	// Without KeepEvents, nothing is trimmed.
	e.post(t, "p1", user("last"))
	c := e.claim(t, "p1", "t-last")
	if err := e.s.Checkpoint(e.ctx, c, chats(3*keep)); err != nil {
		t.Fatal(err)
	}
	if rec := e.commit(t, c, lifecycle.AwaitUser); rec.Trimmed != e.get(t, "p1").Trimmed || len(e.log(t, "p1")) < 3*keep {
		t.Errorf("a commit without KeepEvents trimmed the log to %d events", len(e.log(t, "p1")))
	}
}
