package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

func ids(recs []store.Record) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}

func TestList(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// Created in this order; b1 and b2 in the same millisecond.
	e.processIn(t, "z", lifecycle.Blocked)
	e.processIn(t, "y", lifecycle.Ready)
	e.clock.mu.Lock()
	e.clock.t = e.clock.t.Add(time.Second)
	frozen := e.clock.t
	e.clock.mu.Unlock()
	same, err := store.New(e.rdb, store.Config{Clock: func() time.Time { return frozen }})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"b2", "B1", "b1"} {
		if _, err := same.Create(e.ctx, store.NewProcess{ID: id, Recipe: "r", Engine: engine}); err != nil {
			t.Fatal(err)
		}
	}
	e.processIn(t, "x", lifecycle.Paused)
	e.processIn(t, "a", lifecycle.Blocked)

	tests := []struct {
		state lifecycle.State
		limit int
		want  [][]string // pages
	}{
		{"", 0, [][]string{{"z", "y", "B1", "b1", "b2", "x", "a"}}},
		{"", 2, [][]string{{"z", "y"}, {"B1", "b1"}, {"b2", "x"}, {"a"}}},
		{"", 3, [][]string{{"z", "y", "B1"}, {"b1", "b2", "x"}, {"a"}}},
		{"", 7, [][]string{{"z", "y", "B1", "b1", "b2", "x", "a"}}},
		{lifecycle.Blocked, 2, [][]string{{"z", "B1"}, {"b1", "b2"}, {"a"}}},
		{lifecycle.Blocked, 4, [][]string{{"z", "B1", "b1", "b2"}, {"a"}}},
		{lifecycle.Ready, 10, [][]string{{"y"}}},
		{lifecycle.Done, 10, [][]string{{}}},
	}
	for _, tt := range tests {
		var pages [][]string
		cursor := ""
		for range 10 {
			recs, next, err := e.s.List(e.ctx, tt.state, cursor, tt.limit)
			if err != nil {
				t.Fatalf("List(%q, %q, %d): %v", tt.state, cursor, tt.limit, err)
			}
			for _, r := range recs {
				if tt.state != "" && r.Status.State != tt.state {
					t.Errorf("List(%q) returned %s in %s", tt.state, r.ID, r.Status)
				}
			}
			pages = append(pages, ids(recs))
			if cursor = next; cursor == "" {
				break
			}
		}
		if diff := cmp.Diff(tt.want, pages); diff != "" {
			t.Errorf("List(%q, limit %d) pages (-want +got):\n%s", tt.state, tt.limit, diff)
		}
	}
	for _, bad := range []string{"x", "12", "abc:p1", "1:a}b"} {
		if _, _, err := e.s.List(e.ctx, "", bad, 10); err == nil {
			t.Errorf("List with cursor %q succeeded", bad)
		}
	}
	if _, _, err := e.s.List(e.ctx, "ready", "", 10); err == nil {
		t.Error("List of state \"ready\" succeeded")
	}
}

func TestCounts(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.create(t, "p1", nil)
	e.create(t, "p2", nil)
	m := user("go")
	e.create(t, "p3", &m)
	got, err := e.s.Counts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[lifecycle.Blocked] != 2 || got[lifecycle.Ready] != 1 || got[lifecycle.Done] != 0 {
		t.Fatalf("Counts = %v, want 2 BLOCKED and 1 READY", got)
	}
}
