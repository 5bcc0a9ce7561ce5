package store_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
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

// ListOwned walks one owner's processes, in creation order, a state
// filter leaving short pages with a cursor.
func TestListOwned(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.processIn(t, "a1", lifecycle.Blocked) // owner alice, as every e.create
	e.processIn(t, "a2", lifecycle.Ready)
	if _, err := e.s.Create(e.ctx, store.NewProcess{ID: "b1", Recipe: "r", Engine: engine, Owner: "bob"}); err != nil {
		t.Fatal(err)
	}
	e.processIn(t, "a3", lifecycle.Blocked)
	e.processIn(t, "a4", lifecycle.Done)
	if _, err := e.s.Create(e.ctx, store.NewProcess{ID: "n1", Recipe: "r", Engine: engine}); err != nil {
		t.Fatal(err)
	}

	pages := func(owner string, state lifecycle.State, limit int) [][]string {
		t.Helper()
		var out [][]string
		cursor := ""
		for range 10 {
			recs, next, err := e.s.ListOwned(e.ctx, owner, state, cursor, limit)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ids(recs))
			if cursor = next; cursor == "" {
				return out
			}
		}
		t.Fatalf("ListOwned(%s, %q, %d) did not end", owner, state, limit)
		return nil
	}
	check := func(name string, got, want [][]string) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	check("alice", pages("alice", "", 0), [][]string{{"a1", "a2", "a3", "a4"}})
	check("alice by 3", pages("alice", "", 3), [][]string{{"a1", "a2", "a3"}, {"a4"}})
	check("alice BLOCKED by 1", pages("alice", lifecycle.Blocked, 1), [][]string{{"a1"}, {"a3"}, {}})
	check("alice READY", pages("alice", lifecycle.Ready, 10), [][]string{{"a2"}})
	check("bob", pages("bob", "", 10), [][]string{{"b1"}})
	check("nobody's", pages("carol", "", 10), [][]string{{}})
	if _, _, err := e.s.ListOwned(e.ctx, "", "", "", 10); err == nil {
		t.Error("ListOwned with no owner: no error")
	}
	if _, _, err := e.s.ListOwned(e.ctx, "alice", "SLEEPING", "", 10); err == nil {
		t.Error("ListOwned of an unknown state: no error")
	}

}

// Get and List report how many messages wait in the inbox.
func TestInboxDepth(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.processIn(t, "p1", lifecycle.Blocked)
	e.processIn(t, "p2", lifecycle.Blocked)
	for range 2 { // a BLOCKED process keeps worker results for its next turn
		if _, _, err := e.s.Post(e.ctx, "p1", msg(conversation.KindProcessEvent, "process:w", "done")); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.get(t, "p1"); r.Inbox != 2 {
		t.Errorf("Get: inbox %d, want 2", r.Inbox)
	}
	recs, _, err := e.s.List(e.ctx, lifecycle.Blocked, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range recs {
		got[r.ID] = r.Inbox
	}
	if diff := cmp.Diff(map[string]int{"p1": 2, "p2": 0}, got); diff != "" {
		t.Errorf("List inbox depths (-want +got):\n%s", diff)
	}
}

// ListWorkers walks the workers a process started, in creation order, from
// its workers index.
func TestListWorkers(t *testing.T) {
	t.Parallel()
	e := setupIn(t, 1) // its workers are named
	e.create(t, "p_parent", nil)
	e.create(t, "p_other", nil)
	e.worker(t, "w1", "p_parent")
	e.worker(t, "w2", "p_other")
	e.worker(t, "w3", "p_parent")
	e.worker(t, "w4", "p_parent")
	e.transition(t, "w3", lifecycle.Finish)

	recs, next, err := e.s.ListWorkers(e.ctx, "p_parent", "", "", 2)
	if err != nil || !slices.Equal(ids(recs), []string{"w1", "w3"}) || next == "" {
		t.Fatalf("first page: %v, next %q, %v; want w1, w3 and a cursor", ids(recs), next, err)
	}
	recs, next, err = e.s.ListWorkers(e.ctx, "p_parent", "", next, 2)
	if err != nil || !slices.Equal(ids(recs), []string{"w4"}) || next != "" {
		t.Errorf("second page: %v, next %q, %v; want w4, the last", ids(recs), next, err)
	}
	if recs, _, err := e.s.ListWorkers(e.ctx, "p_parent", lifecycle.Done, "", 10); err != nil || !slices.Equal(ids(recs), []string{"w3"}) {
		t.Errorf("DONE workers: %v, %v; want w3", ids(recs), err)
	}
	if recs, _, err := e.s.ListWorkers(e.ctx, "w1", "", "", 10); err != nil || len(recs) != 0 {
		t.Errorf("workers of a worker without any: %v, %v; want none", ids(recs), err)
	}
	if _, _, err := e.s.ListWorkers(e.ctx, "no{such}", "", "", 10); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an invalid id: %v, want ErrNotFound", err)
	}
}

// TestListWhileCreating pages through every partition while processes are
// created: a page never repeats a process, and every process created
// before the walk began is listed once; on one Redis and on a Cluster.
func TestListWhileCreating(t *testing.T) {
	t.Parallel()
	for name, rdb := range map[string]func(t *testing.T) redis.UniversalClient{
		"redis":   func(t *testing.T) redis.UniversalClient { return testutil.Redis(t) },
		"cluster": func(t *testing.T) redis.UniversalClient { _, c := testutil.RedisCluster(t, 3, 0); return c },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := store.New(rdb(t), store.Config{}) // the real clock: processes share milliseconds
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			before := map[string]bool{}
			for i := range 150 {
				r, err := s.Create(ctx, store.NewProcess{ID: fmt.Sprintf("b%03d", i), Recipe: "r", Engine: engine})
				if err != nil {
					t.Fatal(err)
				}
				before[r.ID] = true
			}
			var wg sync.WaitGroup
			wg.Go(func() { // as many more as the walk meets, while it walks
				for i := range 300 {
					if _, err := s.Create(ctx, store.NewProcess{ID: fmt.Sprintf("d%05d", i), Recipe: "r", Engine: engine}); err != nil {
						t.Error(err)
						return
					}
				}
			})
			seen := map[string]int{}
			for cursor, pages := "", 0; ; pages++ {
				recs, next, err := s.List(ctx, "", cursor, 7)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					seen[r.ID]++
				}
				if cursor = next; cursor == "" || pages > 1000 {
					break
				}
			}
			wg.Wait()
			for id, n := range seen {
				if n > 1 {
					t.Errorf("%s listed %d times", id, n)
				}
			}
			for id := range before {
				if seen[id] != 1 {
					t.Errorf("%s, created before the walk, listed %d times", id, seen[id])
				}
			}
		})
	}
}
