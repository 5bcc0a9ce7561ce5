package brain

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
	h := newHistories(10)
	first := h.extend("p", "", events("1", "2"))
	second := h.extend("p", "2", events("3"))
	third := h.extend("p", "3", events("4", "5"))
	if diff := cmp.Diff([]string{"1", "2", "3", "4", "5"}, ids(third)); diff != "" {
		t.Fatalf("kept log (-want +got):\n%s", diff)
	}
	if got := h.known("p"); got != "5" {
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

func TestHistoriesExtendMismatchDropsTheLog(t *testing.T) {
	h := newHistories(10)
	h.extend("p", "", events("1", "2"))
	if got := h.extend("p", "1", events("3")); got != nil {
		t.Fatalf("extend after a stale id = %v, want nil", ids(got))
	}
	if got := h.known("p"); got != "" {
		t.Errorf("known after a mismatch = %q, want \"\" (the next claim reads the whole log)", got)
	}
	if got := h.extend("q", "7", events("8")); got != nil {
		t.Errorf("extend of an unknown process after an id = %v, want nil", ids(got))
	}
}

func TestHistoriesBounded(t *testing.T) {
	h := newHistories(2)
	for _, pid := range []string{"a", "b", "c"} {
		h.extend(pid, "", events(pid+"1"))
	}
	if n := len(h.m); n != 2 {
		t.Errorf("kept %d logs, want at most 2", n)
	}
	off := newHistories(0)
	if got := off.extend("a", "", events("1")); len(got) != 1 {
		t.Errorf("a disabled cache still returns the history it is given, got %v", ids(got))
	}
	if got := off.known("a"); got != "" {
		t.Errorf("a disabled cache knows %q, want nothing", got)
	}
}
