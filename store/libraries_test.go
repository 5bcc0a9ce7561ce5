package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/internal/testutil"
)

// TestTendLibraries checks that the libraries of brain versions no node
// uses are deleted once LibraryRetention has passed since a node last
// noted them (or first saw them), and nothing else is.
func TestTendLibraries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testutil.Redis(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(rdb, Config{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	aTurn(t, s) // loads this version's library
	ours := s.scripts.post.lib.name
	const (
		gone  = "brain_00000000000a" // a version nobody runs any more
		alive = "brain_00000000000b" // a version a node still runs
	)
	for _, name := range []string{gone, alive, "brain_tools", "mylib"} {
		code := "#!lua name=" + name + "\nredis.register_function('" + name + "_f', function() return 1 end)"
		if err := rdb.FunctionLoad(ctx, code).Err(); err != nil {
			t.Fatal(err)
		}
	}
	tend := func(as string) []string {
		t.Helper()
		retired, err := s.tendLibraries(ctx, as)
		if err != nil {
			t.Fatalf("tendLibraries at %s: %v", now.Format(time.TimeOnly), err)
		}
		return retired
	}
	noted := func() []string {
		t.Helper()
		names, err := rdb.ZRange(ctx, librariesKey, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(names)
		return names
	}

	if got := tend(ours); len(got) != 0 {
		t.Fatalf("first sight retired %v; want none: each library is kept LibraryRetention from then", got)
	}
	now = now.Add(LibraryRetention / 2)
	tend(alive) // its node notes it, as ours does below
	now = now.Add(LibraryRetention / 2)
	if got := tend(ours); len(got) != 0 {
		t.Fatalf("after exactly LibraryRetention: retired %v; want none", got)
	}
	now = now.Add(time.Millisecond)
	if got := tend(ours); !slices.Equal(got, []string{gone}) {
		t.Fatalf("after LibraryRetention: retired %v; want [%s]", got, gone)
	}
	want := []string{alive, "brain_tools", ours, "mylib"}
	slices.Sort(want)
	got := libraries(t, rdb)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("libraries left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{alive, ours}, noted()); diff != "" {
		t.Errorf("noted libraries (-want +got):\n%s", diff)
	}

	// A library deleted by hand is forgotten; ours is noted even before
	// it is loaded (a node may tend before its first script call).
	if err := rdb.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if got := tend(ours); len(got) != 0 {
		t.Errorf("after FUNCTION FLUSH: retired %v; want none", got)
	}
	if diff := cmp.Diff([]string{ours}, noted()); diff != "" {
		t.Errorf("noted libraries after FUNCTION FLUSH (-want +got):\n%s", diff)
	}
}
