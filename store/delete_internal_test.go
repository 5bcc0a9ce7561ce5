package store

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
)

// TestDeleteFinishedChecksAgain: the deletion itself checks that the
// process is still finished and unchanged since the cutoff, so one retried
// or changed after DeleteFinished listed it is kept.
func TestDeleteFinishedChecksAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(testutil.Redis(t), Config{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []string{"p_blocked", "p_done"} {
		if _, err := s.Create(ctx, NewProcess{ID: pid, Recipe: "r", Engine: "chat"}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Hour)
	if _, _, err := s.Transition(ctx, "p_done", lifecycle.Finish, "operator:olga"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pid    string
		cutoff time.Time
	}{
		{"p_blocked", now.Add(time.Hour)}, // not finished
		{"p_done", now},                   // finished, but not before the cutoff
	} {
		if _, err := s.delete(ctx, tc.pid, "", strconv.FormatInt(tc.cutoff.UnixMilli(), 10), nil); !errors.Is(err, errKept) {
			t.Errorf("delete(%s, finished before %s): %v, want errKept", tc.pid, tc.cutoff.Format(time.TimeOnly), err)
		}
		if _, err := s.Get(ctx, tc.pid); err != nil {
			t.Errorf("%s after the refused deletion: %v", tc.pid, err)
		}
	}
	if _, err := s.delete(ctx, "p_done", "", strconv.FormatInt(now.Add(time.Millisecond).UnixMilli(), 10), nil); err != nil {
		t.Errorf("delete(p_done, finished before a later cutoff): %v", err)
	}
}
