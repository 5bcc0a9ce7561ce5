package node

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
)

func events(ids ...string) []conversation.Event {
	evs := make([]conversation.Event, len(ids))
	for i, id := range ids {
		evs[i] = conversation.Event{ID: id, Type: conversation.TypeSystemNotice}
	}
	return evs
}

func ids(evs []conversation.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func TestHistoriesExtend(t *testing.T) {
	h := newHistories(10, 1<<20)
	first := h.extend("p", "", events("1", "2"))
	second := h.extend("p", "2", events("3"))
	third := h.extend("p", "3", events("4", "5"))
	if diff := cmp.Diff([]string{"1", "2", "3", "4", "5"}, ids(third)); diff != "" {
		t.Fatalf("kept log (-want +got):\n%s", diff)
	}
	if got, _ := h.known("p"); got != "5" {
		t.Errorf("known = %q, want 5", got)
	}
	// What was handed out earlier is unchanged by the growth after it...
	if diff := cmp.Diff([]string{"1", "2"}, ids(first)); diff != "" {
		t.Errorf("first slice changed (-want +got):\n%s", diff)
	}
	// ...and a holder that appends gets a copy, never a write into the kept
	// log.
	_ = append(second, events("x")...)
	if diff := cmp.Diff([]string{"1", "2", "3", "4", "5"}, ids(h.extend("p", "5", nil))); diff != "" {
		t.Errorf("kept log after a holder appended (-want +got):\n%s", diff)
	}
}

// A log kept without its oldest events says so as it grows, until it is
// started afresh.
func TestHistoriesKeepOmitted(t *testing.T) {
	h := newHistories(10, 1<<20)
	if _, omitted := h.grow("p", "", events("7", "8"), true); !omitted {
		t.Error("a log started without its oldest events: not omitted")
	}
	if log, omitted := h.grow("p", "8", events("9"), false); !omitted || len(log) != 3 {
		t.Errorf("grown: %d events, omitted %v; want 3, omitted", len(log), omitted)
	}
	if _, omitted := h.grow("p", "", events("1"), false); omitted {
		t.Error("started afresh whole: omitted")
	}
}

func TestHistoriesExtendMismatchDropsTheLog(t *testing.T) {
	h := newHistories(10, 1<<20)
	h.extend("p", "", events("1", "2"))
	if got := h.extend("p", "1", events("3")); got != nil {
		t.Fatalf("extend after a stale id = %v, want nil", ids(got))
	}
	if got, _ := h.known("p"); got != "" {
		t.Errorf("known after a mismatch = %q, want \"\" (the next claim reads the whole log)", got)
	}
	if got := h.extend("q", "7", events("8")); got != nil {
		t.Errorf("extend of an unknown process after an id = %v, want nil", ids(got))
	}
}

func TestHistoriesBounded(t *testing.T) {
	h := newHistories(2, 1<<20)
	for _, pid := range []string{"a", "b", "c"} {
		h.extend(pid, "", events(pid+"1"))
	}
	if n := len(h.m); n != 2 {
		t.Errorf("kept %d logs, want at most 2", n)
	}
	off := newHistories(0, 1<<20)
	if got := off.extend("a", "", events("1")); len(got) != 1 {
		t.Errorf("a disabled cache still returns the history it is given, got %v", ids(got))
	}
	if got, _ := off.known("a"); got != "" {
		t.Errorf("a disabled cache knows %q, want nothing", got)
	}
}

// TestHistoriesBoundedInBytes checks that long logs make room by evicting
// others, that a log larger than the bound is handed back but not kept, and
// that the count of kept bytes follows every change.
func TestHistoriesBoundedInBytes(t *testing.T) {
	one := events("x1")[0].Size() // every id below has two bytes
	h := newHistories(10, 4*one)
	h.extend("a", "", events("a1", "a2"))
	h.extend("b", "", events("b1"))
	if got := h.extend("b", "b1", events("b2")); len(got) != 2 {
		t.Fatalf("extend = %v, want b's whole log", ids(got))
	}
	if _, ok := h.m["a"]; !ok || h.bytes != 4*one {
		t.Fatalf("kept %d bytes (a kept: %t), want a and b, %d bytes", h.bytes, ok, 4*one)
	}
	// b grows past what fits beside a: a goes.
	if got := h.extend("b", "b2", events("b3")); len(got) != 3 {
		t.Fatalf("extend = %v, want b's whole log", ids(got))
	}
	if _, ok := h.m["a"]; ok || h.bytes != 3*one {
		t.Errorf("kept %d bytes (a kept: %t), want only b, %d bytes", h.bytes, ok, 3*one)
	}
	// Larger than the bound alone: handed back, not kept.
	if got := h.extend("b", "b3", events("b4", "b5")); len(got) != 5 {
		t.Fatalf("extend = %v, want b's whole log", ids(got))
	}
	if last, _ := h.known("b"); last != "" || h.bytes != 0 {
		t.Errorf("after outgrowing the bound: known %q, %d bytes kept; want nothing", last, h.bytes)
	}
	if got := h.extend("c", "", events("c1", "c2", "c3", "c4", "c5")); len(got) != 5 {
		t.Fatalf("extend of a new log larger than the bound = %v, want it back whole", ids(got))
	}
	if last, _ := h.known("c"); last != "" || h.bytes != 0 {
		t.Errorf("a new log larger than the bound: known %q, %d bytes kept; want nothing", last, h.bytes)
	}
	// Restarting and dropping a log give its bytes back.
	h.extend("d", "", events("d1", "d2"))
	h.extend("d", "", events("d1"))
	if h.bytes != one {
		t.Errorf("after a restart: %d bytes kept, want %d", h.bytes, one)
	}
	h.extend("d", "stale", events("d9"))
	if h.bytes != 0 || len(h.m) != 0 {
		t.Errorf("after a mismatch: %d bytes, %d logs kept; want none", h.bytes, len(h.m))
	}
}

// turnEvents are the events of a turn with ids prefix1, prefix2, ...: its
// start, a user message, a tool round (a model response of two parts) and
// an answer.
func turnEvents(prefix string) []conversation.Event {
	evs := []conversation.Event{
		conversation.NewTurnStart("wake"),
		conversation.NewInboxMessage(prefix+"m", conversation.KindUser, "user:alice", "question "+prefix),
		conversation.NewChatMessage("let me look"),
		conversation.NewToolCallRequest(prefix+"c", "clock", nil),
		conversation.NewToolCallResponse(prefix+"c", "clock", []conversation.Block{conversation.TextBlock("09:26")}, false),
		conversation.NewChatMessage("answer " + prefix),
		conversation.NewStateChange("RUNNING", "BLOCKED", "await_user"),
	}
	for i := range evs {
		evs[i].ID = prefix + string(rune('1'+i))
	}
	return evs
}

// TestHistoriesView checks that the kept provider view and its token count
// are always those of the kept log, when it grows a turn at a time, when
// what came since it was last asked starts inside a model response, and
// after a reset; and that a view handed out is not changed by later growth.
func TestHistoriesView(t *testing.T) {
	h := newHistories(10, 1<<20)
	check := func(step string) []conversation.Message {
		t.Helper()
		got, tokens := h.view("p")
		last, _ := h.known("p")
		want := conversation.ProviderView(h.extend("p", last, nil))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: view (-ProviderView of the kept log +kept view):\n%s", step, diff)
		}
		if n := conversation.ViewTokens(want); tokens != n {
			t.Errorf("%s: the kept view counts %d tokens, ViewTokens of the log's view %d", step, tokens, n)
		}
		return got
	}
	if got, tokens := h.view("p"); got != nil || tokens != 0 {
		t.Errorf("view of a process not kept = %v, %d tokens; want nil, 0", got, tokens)
	}
	a, b, c := turnEvents("a"), turnEvents("b"), turnEvents("c")
	h.extend("p", "", a)
	first := check("one turn")
	firstWant := conversation.ProviderView(a)

	h.extend("p", lastID(a), b[:2]) // a claim: the next turn's start
	check("a turn's start")
	h.extend("p", lastID(b[:2]), b[2:]) // its commit
	h.extend("p", lastID(b), c[:3])     // the next claim and the first part of a response
	check("events since the last view that start with a turn")
	h.extend("p", lastID(c[:3]), c[3:]) // the response's second part, and on
	check("events since the last view that start inside a model response")

	if diff := cmp.Diff(firstWant, first); diff != "" {
		t.Errorf("a view handed out changed as the log grew (-then +now):\n%s", diff)
	}
	h.extend("p", "", b)
	check("a log read afresh")

	if got, _ := newHistories(0, 1<<20).view("p"); got != nil {
		t.Errorf("a disabled cache has a view: %v", got)
	}
}
