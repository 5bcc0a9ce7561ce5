package store_test

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

func (e *env) putTimer(t *testing.T, tm store.Timer) {
	t.Helper()
	if err := e.s.PutTimer(e.ctx, tm); err != nil {
		t.Fatalf("PutTimer(%s): %v", tm.ID, err)
	}
}

// TestFireTimerOnce fires the same due timer from several goroutines (as
// several nodes would): it fires once.
func TestFireTimerOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.processIn(t, "p1", lifecycle.Ready)
	due := t0.Add(time.Minute)
	e.putTimer(t, store.Timer{ID: "daily", PID: "p1", Cron: "0 9 * * *", Message: "report", Due: due})
	timers, err := e.s.DueTimers(e.ctx, due, 10)
	if err != nil || len(timers) != 1 {
		t.Fatalf("DueTimers = %v, %v", timers, err)
	}
	var fired atomic.Int32
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			ok, err := e.s.FireTimer(e.ctx, timers[0], due.Add(24*time.Hour))
			if err != nil {
				t.Error(err)
			}
			if ok {
				fired.Add(1)
			}
		})
	}
	wg.Wait()
	if n := fired.Load(); n != 1 {
		t.Errorf("fired %d times, want 1", n)
	}
	msgs, err := e.s.Inbox(e.ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Kind != conversation.KindSchedule || msgs[0].From != "timer:daily" || msgs[0].Content != "report" {
		t.Errorf("inbox = %+v, want one schedule message from timer:daily", msgs)
	}
	if r := e.get(t, "p1"); !r.Queued {
		t.Error("READY process not woken by its timer")
	}
}

func TestFireTimerRearm(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.processIn(t, "p1", lifecycle.Blocked)
	due, next := t0.Add(time.Minute), t0.Add(time.Hour)
	tm := store.Timer{ID: "tick", PID: "p1", Cron: "@hourly", Message: "tick", Due: due}
	e.putTimer(t, tm)
	if ok, err := e.s.FireTimer(e.ctx, tm, next); err != nil || !ok {
		t.Fatalf("FireTimer = %v, %v", ok, err)
	}
	got, err := e.s.Timers(e.ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	want := tm
	want.Due = next
	if diff := cmp.Diff([]store.Timer{want}, got); diff != "" {
		t.Errorf("Timers (-want +got):\n%s", diff)
	}
	if due, _ := e.s.DueTimers(e.ctx, next.Add(-time.Millisecond), 10); len(due) != 0 {
		t.Errorf("rearmed timer due early: %v", due)
	}
	if due, _ := e.s.DueTimers(e.ctx, next, 10); len(due) != 1 || !due[0].Due.Equal(next) {
		t.Errorf("DueTimers at next = %v", due)
	}
	// The old due time is gone: firing it again does nothing.
	if ok, err := e.s.FireTimer(e.ctx, tm, next.Add(time.Hour)); err != nil || ok {
		t.Errorf("FireTimer of a fired due = %v, %v; want false", ok, err)
	}
	// A schedule message does not unblock.
	if r := e.get(t, "p1"); r.Status.State != lifecycle.Blocked || r.Queued {
		t.Errorf("process = %s queued %v, want BLOCKED", r.Status, r.Queued)
	}
	if diff := cmp.Diff([]string{"tick"}, e.inbox(t, "p1")); diff != "" {
		t.Errorf("inbox (-want +got):\n%s", diff)
	}
}

func TestFireTimerOneShotAndGone(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.processIn(t, "p1", lifecycle.Blocked)
	at := t0.Add(time.Minute)
	tm := store.Timer{ID: "once", PID: "p1", At: at, Message: "wake up", Due: at}
	e.putTimer(t, tm)
	if ok, err := e.s.FireTimer(e.ctx, tm, time.Time{}); err != nil || !ok {
		t.Fatalf("FireTimer = %v, %v", ok, err)
	}
	if got, _ := e.s.Timers(e.ctx, "p1"); len(got) != 0 {
		t.Errorf("one-shot timer kept: %v", got)
	}
	if due, _ := e.s.DueTimers(e.ctx, at.Add(time.Hour), 10); len(due) != 0 {
		t.Errorf("one-shot timer still scheduled: %v", due)
	}

	// A closed process's timer is removed, not fired.
	tm.ID = "late"
	e.putTimer(t, tm)
	e.transition(t, "p1", lifecycle.Finish)
	if ok, err := e.s.FireTimer(e.ctx, tm, at.Add(time.Hour)); err != nil || ok {
		t.Errorf("FireTimer on a DONE process = %v, %v; want false", ok, err)
	}
	if got, _ := e.s.Timers(e.ctx, "p1"); len(got) != 0 {
		t.Errorf("timer of a DONE process kept: %v", got)
	}
	if err := e.s.PutTimer(e.ctx, tm); !errors.Is(err, store.ErrClosed) {
		t.Errorf("PutTimer on a DONE process = %v, want ErrClosed", err)
	}
	tm.PID = "ghost"
	if err := e.s.PutTimer(e.ctx, tm); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutTimer on an unknown process = %v, want ErrNotFound", err)
	}
}

func TestCancelTimer(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.processIn(t, "p1", lifecycle.Blocked)
	tm := store.Timer{ID: "x", PID: "p1", Message: "m", Due: t0}
	e.putTimer(t, tm)
	if err := e.s.CancelTimer(e.ctx, "p1", "x"); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.s.Timers(e.ctx, "p1"); len(got) != 0 {
		t.Errorf("Timers after cancel = %v", got)
	}
	if due, _ := e.s.DueTimers(e.ctx, t0, 10); len(due) != 0 {
		t.Errorf("DueTimers after cancel = %v", due)
	}
	if ok, _ := e.s.FireTimer(e.ctx, tm, time.Time{}); ok {
		t.Error("a cancelled timer fired")
	}
	if err := e.s.CancelTimer(e.ctx, "p1", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second CancelTimer = %v, want ErrNotFound", err)
	}
}

func TestDueTimers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.processIn(t, "p1", lifecycle.Blocked)
	e.processIn(t, "p2", lifecycle.Blocked)
	put := []store.Timer{
		{ID: "c", PID: "p1", Message: "3", Due: t0.Add(3 * time.Minute)},
		{ID: "a", PID: "p2", Message: "1", Due: t0.Add(1 * time.Minute)},
		{ID: "late", PID: "p1", Message: "later", Due: t0.Add(time.Hour)},
		{ID: "b", PID: "p1", Message: "2", Due: t0.Add(2 * time.Minute)},
	}
	for _, tm := range put {
		e.putTimer(t, tm)
	}
	got, err := e.s.DueTimers(e.ctx, t0.Add(5*time.Minute), 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Timer{put[1], put[3], put[0]}, got); diff != "" {
		t.Errorf("DueTimers (-want +got):\n%s", diff)
	}
	got, _ = e.s.DueTimers(e.ctx, t0.Add(5*time.Minute), 2)
	if diff := cmp.Diff([]store.Timer{put[1], put[3]}, got); diff != "" {
		t.Errorf("DueTimers limit 2 (-want +got):\n%s", diff)
	}
	// Replacing a timer moves it.
	moved := put[0]
	moved.Due = t0
	e.putTimer(t, moved)
	got, _ = e.s.DueTimers(e.ctx, t0.Add(5*time.Minute), 1)
	if diff := cmp.Diff([]store.Timer{moved}, got); diff != "" {
		t.Errorf("DueTimers after replacing c (-want +got):\n%s", diff)
	}
	mine, _ := e.s.Timers(e.ctx, "p1")
	if len(mine) != 3 || mine[0].ID != "c" || mine[2].ID != "late" {
		t.Errorf("Timers(p1) = %v, want c, b, late", mine)
	}
}

// PutTimerOnce does not arm again a one-shot timer that has fired (a
// resumed turn's schedule_wakeup, made again under the same id), but does
// re-arm one that has not, and a recurring one; PutTimer always arms.
func TestPutTimerOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.processIn(t, "p1", lifecycle.Ready)
	due := t0.Add(time.Minute)
	once := store.Timer{ID: "w_once", PID: "p1", At: due, Message: "once", Due: due}
	daily := store.Timer{ID: "w_daily", PID: "p1", Cron: "0 9 * * *", Message: "daily", Due: due}
	for _, tm := range []store.Timer{once, daily} {
		if err := e.s.PutTimerOnce(e.ctx, tm); err != nil {
			t.Fatalf("PutTimerOnce(%s): %v", tm.ID, err)
		}
		if err := e.s.PutTimerOnce(e.ctx, tm); err != nil {
			t.Fatalf("PutTimerOnce(%s) before it fired: %v", tm.ID, err)
		}
	}
	if fired, err := e.s.FireTimer(e.ctx, once, time.Time{}); err != nil || !fired {
		t.Fatalf("FireTimer(once) = %v, %v", fired, err)
	}
	if fired, err := e.s.FireTimer(e.ctx, daily, due.Add(24*time.Hour)); err != nil || !fired {
		t.Fatalf("FireTimer(daily) = %v, %v", fired, err)
	}
	if err := e.s.PutTimerOnce(e.ctx, once); !errors.Is(err, store.ErrTimerFired) {
		t.Errorf("PutTimerOnce of the fired one-shot: %v, want ErrTimerFired", err)
	}
	if err := e.s.PutTimerOnce(e.ctx, daily); err != nil {
		t.Errorf("PutTimerOnce of the recurring timer after it fired: %v", err)
	}
	timers, err := e.s.Timers(e.ctx, "p1")
	if err != nil || len(timers) != 1 || timers[0].ID != "w_daily" {
		t.Fatalf("timers = %+v, %v; want the recurring one only", timers, err)
	}
	e.putTimer(t, once) // PutTimer: the caller means it
	if timers, _ := e.s.Timers(e.ctx, "p1"); len(timers) != 2 {
		t.Errorf("PutTimer of the fired one-shot: %d timers, want it armed again", len(timers))
	}
}

// A recurring timer whose last tick still waits in the inbox (its process
// waits for the user: ticks do not wake a BLOCKED process) does not queue
// another: the process reads one tick, not one per hour it slept through.
// Another timer's tick is its own; once the tick is drained, the next
// firing posts again.
func TestTimerTicksWhileWaiting(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.processIn(t, "p1", lifecycle.Blocked)
	due := t0.Add(time.Minute)
	hourly := store.Timer{ID: "hourly", PID: "p1", Cron: "0 * * * *", Message: "hourly check", Due: due}
	e.putTimer(t, hourly)
	fire := func(tm store.Timer, at time.Time) store.Timer {
		t.Helper()
		tm.Due = at
		fired, err := e.s.FireTimer(e.ctx, tm, at.Add(time.Hour))
		if err != nil || !fired {
			t.Fatalf("FireTimer(%s at %s) = %v, %v; want fired", tm.ID, at, fired, err)
		}
		return tm
	}
	for i := range 3 {
		fire(hourly, due.Add(time.Duration(i)*time.Hour))
	}
	if got := e.inbox(t, "p1"); !slices.Equal(got, []string{"hourly check"}) {
		t.Fatalf("inbox after three hourly firings: %q; want one tick", got)
	}
	daily := store.Timer{ID: "daily", PID: "p1", Cron: "0 9 * * *", Message: "daily report", Due: due}
	e.putTimer(t, daily)
	fire(daily, due)
	if got := e.inbox(t, "p1"); !slices.Equal(got, []string{"hourly check", "daily report"}) {
		t.Fatalf("inbox after another timer fired: %q; want its tick too", got)
	}

	e.post(t, "p1", user("back"))
	c := e.claim(t, "p1", "t1")
	e.commit(t, c, lifecycle.AwaitUser)
	fire(hourly, due.Add(3*time.Hour))
	if got := e.inbox(t, "p1"); !slices.Equal(got, []string{"hourly check"}) {
		t.Errorf("inbox after the drain and a firing: %q; want a new tick", got)
	}
}
