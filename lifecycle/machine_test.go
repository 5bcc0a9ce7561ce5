package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/lifecycle"
)

var at = time.Date(2025, 11, 29, 13, 15, 0, 0, time.UTC)

func status(s lifecycle.State) lifecycle.Status { return lifecycle.Status{State: s} }

func paused(from lifecycle.State) lifecycle.Status {
	return lifecycle.Status{State: lifecycle.Paused, PausedFrom: from}
}

// allowed is the lifecycle table as the package comment documents it: for
// each status, the events it allows and the status each leads to. Every
// event missing from a row is forbidden in that status.
var allowed = []struct {
	from lifecycle.Status
	to   map[lifecycle.Event]lifecycle.Status
}{
	{status(lifecycle.Ready), map[lifecycle.Event]lifecycle.Status{
		lifecycle.Wake:   status(lifecycle.Running),
		lifecycle.Pause:  paused(lifecycle.Ready),
		lifecycle.Finish: status(lifecycle.Done),
	}},
	{status(lifecycle.Running), map[lifecycle.Event]lifecycle.Status{
		lifecycle.AwaitUser: status(lifecycle.Blocked),
		lifecycle.Continue:  status(lifecycle.Ready),
		lifecycle.Pause:     paused(lifecycle.Running),
		lifecycle.Finish:    status(lifecycle.Done),
		lifecycle.Fail:      status(lifecycle.Failed),
		lifecycle.Recover:   status(lifecycle.Ready),
	}},
	{status(lifecycle.Blocked), map[lifecycle.Event]lifecycle.Status{
		lifecycle.UserInput: status(lifecycle.Ready),
		lifecycle.Pause:     paused(lifecycle.Blocked),
		lifecycle.Finish:    status(lifecycle.Done),
	}},
	{paused(""), map[lifecycle.Event]lifecycle.Status{
		lifecycle.Resume: status(lifecycle.Ready),
		lifecycle.Finish: status(lifecycle.Done),
	}},
	{paused(lifecycle.Ready), map[lifecycle.Event]lifecycle.Status{
		lifecycle.Resume: status(lifecycle.Ready),
		lifecycle.Finish: status(lifecycle.Done),
	}},
	{paused(lifecycle.Running), map[lifecycle.Event]lifecycle.Status{
		lifecycle.Resume: status(lifecycle.Ready), // RUNNING resumes as READY
		lifecycle.Finish: status(lifecycle.Done),
		lifecycle.Fail:   status(lifecycle.Failed), // the paused turn failed
	}},
	{paused(lifecycle.Blocked), map[lifecycle.Event]lifecycle.Status{
		lifecycle.Resume: status(lifecycle.Blocked),
		lifecycle.Finish: status(lifecycle.Done),
	}},
	{status(lifecycle.Done), map[lifecycle.Event]lifecycle.Status{}},
	{status(lifecycle.Failed), map[lifecycle.Event]lifecycle.Status{
		lifecycle.Retry: status(lifecycle.Ready),
	}},
}

// guard runs f on its own goroutine and fails the test if f panics or does
// not return within a generous bound: a deadlock guard, not a wait for f.
func guard(t *testing.T, f func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("panic: %v", p)
		}
	case <-timer.C:
		t.Fatal("did not return within 30s: deadlock")
	}
}

func TestEveryStatusAndEvent(t *testing.T) {
	t.Parallel()
	for _, row := range allowed {
		for _, ev := range allEvents {
			want, ok := row.to[ev]
			t.Run(fmt.Sprintf("%s/%s", row.from, ev), func(t *testing.T) {
				t.Parallel()
				var (
					tr   lifecycle.Transition
					next lifecycle.Status
					err  error
					can  bool
					m    *lifecycle.Machine
					mErr error
					mTr  lifecycle.Transition
				)
				guard(t, func() {
					can = lifecycle.Can(row.from, ev)
					tr, next, err = lifecycle.Fire(context.Background(), row.from, ev, "operator:bob", at)

					// The same event on a Machine, which must stay usable.
					m, mErr = lifecycle.New(row.from)
					if mErr != nil {
						return
					}
					mTr, mErr = m.Fire(context.Background(), ev, "operator:bob", at)
				})
				if mErr != nil && !errors.Is(mErr, lifecycle.ErrForbidden) {
					t.Fatalf("Machine: %v", mErr)
				}
				if can != ok {
					t.Errorf("Can = %v, want %v", can, ok)
				}

				if ok {
					if err != nil {
						t.Fatalf("Fire: %v, want to reach %s", err, want)
					}
					wantTr := lifecycle.Transition{From: row.from.State, To: want.State, Event: ev, By: "operator:bob", At: at}
					if diff := cmp.Diff(wantTr, tr); diff != "" {
						t.Errorf("Fire transition mismatch (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(want, next); diff != "" {
						t.Errorf("Fire status mismatch (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(wantTr, mTr); diff != "" {
						t.Errorf("Machine.Fire transition mismatch (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(want, m.Status()); diff != "" {
						t.Errorf("Machine.Status after Fire mismatch (-want +got):\n%s", diff)
					}
					return
				}

				var te *lifecycle.TransitionError
				if !errors.As(err, &te) {
					t.Fatalf("Fire error = %v (%T), want *TransitionError", err, err)
				}
				if diff := cmp.Diff(&lifecycle.TransitionError{State: row.from.State, Event: ev}, te); diff != "" {
					t.Errorf("TransitionError mismatch (-want +got):\n%s", diff)
				}
				if !errors.Is(err, lifecycle.ErrForbidden) {
					t.Errorf("errors.Is(%v, ErrForbidden) = false", err)
				}
				if errors.Is(err, lifecycle.ErrInvalid) {
					t.Errorf("errors.Is(%v, ErrInvalid) = true", err)
				}
				wantMsg := fmt.Sprintf("lifecycle: event %q is not allowed in state %s", string(ev), string(row.from.State))
				if err.Error() != wantMsg {
					t.Errorf("message = %q, want %q", err.Error(), wantMsg)
				}
				if (tr != lifecycle.Transition{} || next != lifecycle.Status{}) {
					t.Errorf("Fire returned %+v, %+v with an error, want zero values", tr, next)
				}
				if !errors.Is(mErr, lifecycle.ErrForbidden) {
					t.Errorf("Machine.Fire error = %v, want ErrForbidden", mErr)
				}
				// A refused event leaves the machine where it was, and usable.
				if diff := cmp.Diff(row.from, m.Status()); diff != "" {
					t.Errorf("Machine.Status after refused event mismatch (-want +got):\n%s", diff)
				}
				guard(t, func() {
					for _, next := range allEvents {
						if got, want := m.Can(next), lifecycle.Can(row.from, next); got != want {
							t.Errorf("after refused %s: Can(%s) = %v, want %v", ev, next, got, want)
						}
					}
				})
			})
		}
	}
}

func TestRunningPausedResumesAsReady(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start lifecycle.State
		steps []lifecycle.Event
		want  []lifecycle.Transition
		end   lifecycle.Status
	}{
		{
			name:  "running resumes as ready",
			start: lifecycle.Ready,
			steps: []lifecycle.Event{lifecycle.Wake, lifecycle.Pause, lifecycle.Resume},
			want: []lifecycle.Transition{
				{From: lifecycle.Ready, To: lifecycle.Running, Event: lifecycle.Wake},
				{From: lifecycle.Running, To: lifecycle.Paused, Event: lifecycle.Pause},
				{From: lifecycle.Paused, To: lifecycle.Ready, Event: lifecycle.Resume},
			},
			end: status(lifecycle.Ready),
		},
		{
			name:  "blocked resumes as blocked",
			start: lifecycle.Running,
			steps: []lifecycle.Event{lifecycle.AwaitUser, lifecycle.Pause, lifecycle.Resume, lifecycle.UserInput},
			want: []lifecycle.Transition{
				{From: lifecycle.Running, To: lifecycle.Blocked, Event: lifecycle.AwaitUser},
				{From: lifecycle.Blocked, To: lifecycle.Paused, Event: lifecycle.Pause},
				{From: lifecycle.Paused, To: lifecycle.Blocked, Event: lifecycle.Resume},
				{From: lifecycle.Blocked, To: lifecycle.Ready, Event: lifecycle.UserInput},
			},
			end: status(lifecycle.Ready),
		},
		{
			name:  "ready resumes as ready",
			start: lifecycle.Ready,
			steps: []lifecycle.Event{lifecycle.Pause, lifecycle.Resume, lifecycle.Wake},
			want: []lifecycle.Transition{
				{From: lifecycle.Ready, To: lifecycle.Paused, Event: lifecycle.Pause},
				{From: lifecycle.Paused, To: lifecycle.Ready, Event: lifecycle.Resume},
				{From: lifecycle.Ready, To: lifecycle.Running, Event: lifecycle.Wake},
			},
			end: status(lifecycle.Running),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Through a stored status, as the store does: rebuild every time.
			st := status(tt.start)
			var stored []lifecycle.Transition
			for i, ev := range tt.steps {
				tr, next, err := lifecycle.Fire(context.Background(), st, ev, "operator:bob", at.Add(time.Duration(i)*time.Second))
				if err != nil {
					t.Fatalf("step %d: Fire(%s, %s): %v", i, st, ev, err)
				}
				stored = append(stored, tr)
				st = next
			}
			// And on one machine.
			m, err := lifecycle.New(status(tt.start))
			if err != nil {
				t.Fatal(err)
			}
			var onMachine []lifecycle.Transition
			for i, ev := range tt.steps {
				tr, err := m.Fire(context.Background(), ev, "operator:bob", at.Add(time.Duration(i)*time.Second))
				if err != nil {
					t.Fatalf("step %d: Machine.Fire(%s): %v", i, ev, err)
				}
				onMachine = append(onMachine, tr)
			}

			want := make([]lifecycle.Transition, len(tt.want))
			for i, tr := range tt.want {
				tr.By, tr.At = "operator:bob", at.Add(time.Duration(i)*time.Second)
				want[i] = tr
			}
			if diff := cmp.Diff(want, stored); diff != "" {
				t.Errorf("stored transitions mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, onMachine); diff != "" {
				t.Errorf("machine transitions mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.end, st); diff != "" {
				t.Errorf("stored end status mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.end, m.Status()); diff != "" {
				t.Errorf("machine end status mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPauseRecordsTheStateItLeft(t *testing.T) {
	t.Parallel()
	for _, from := range []lifecycle.State{lifecycle.Ready, lifecycle.Running, lifecycle.Blocked} {
		_, next, err := lifecycle.Fire(context.Background(), status(from), lifecycle.Pause, "operator:bob", at)
		if err != nil {
			t.Fatalf("pause from %s: %v", from, err)
		}
		if diff := cmp.Diff(paused(from), next); diff != "" {
			t.Errorf("pause from %s: status mismatch (-want +got):\n%s", from, diff)
		}
	}
}

func TestCancelledContextDoesNotBreakTheMachine(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), at)
	defer cancel2()

	for name, ctx := range map[string]context.Context{"cancelled": cancelled, "expired": expired} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, err := lifecycle.New(status(lifecycle.Ready))
			if err != nil {
				t.Fatal(err)
			}
			guard(t, func() {
				steps := []struct {
					ctx context.Context
					ev  lifecycle.Event
					to  lifecycle.State
				}{
					{ctx, lifecycle.Wake, lifecycle.Running},
					{ctx, lifecycle.Continue, lifecycle.Ready},
					{context.Background(), lifecycle.Wake, lifecycle.Running},
					{ctx, lifecycle.AwaitUser, lifecycle.Blocked},
				}
				for _, s := range steps {
					tr, err := m.Fire(s.ctx, s.ev, "node:n1", at)
					if err != nil {
						t.Errorf("Fire(%s) with %s context: %v", s.ev, name, err)
						return
					}
					if tr.To != s.to {
						t.Errorf("Fire(%s) reached %s, want %s", s.ev, tr.To, s.to)
					}
				}
				// A refused event under a dead context is refused, not stuck.
				if _, err := m.Fire(ctx, lifecycle.Wake, "node:n1", at); !errors.Is(err, lifecycle.ErrForbidden) {
					t.Errorf("Fire(wake) in BLOCKED = %v, want ErrForbidden", err)
				}
				if !m.Can(lifecycle.UserInput) {
					t.Error("Can(user_input) = false in BLOCKED after a dead context")
				}
			})
		})
	}
}

func TestFireRejectsInvalidInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  lifecycle.Status
		event   lifecycle.Event
		by      string
		at      time.Time
		wantErr string
	}{
		{"unknown event", status(lifecycle.Ready), "start", "operator:bob", at, `event "start": want one of "wake"`},
		{"empty event", status(lifecycle.Ready), "", "operator:bob", at, `event "": want one of`},
		{"internal state name as event", status(lifecycle.Ready), "PAUSED/READY", "operator:bob", at, `event "PAUSED/READY"`},
		{"empty by", status(lifecycle.Ready), lifecycle.Wake, "", at, `event "wake": by is empty`},
		{"zero at", status(lifecycle.Ready), lifecycle.Wake, "node:n1", time.Time{}, `event "wake": at is the zero time`},
		{"unknown state", status("STOPPED"), lifecycle.Wake, "node:n1", at, `state "STOPPED"`},
		{"paused from done", paused(lifecycle.Done), lifecycle.Resume, "operator:bob", at, `paused_from "DONE"`},
		{"stale paused from", lifecycle.Status{State: lifecycle.Ready, PausedFrom: lifecycle.Blocked}, lifecycle.Wake, "node:n1", at, `paused_from "BLOCKED" is set on a READY process`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var (
				tr   lifecycle.Transition
				next lifecycle.Status
				err  error
				can  bool
			)
			guard(t, func() {
				tr, next, err = lifecycle.Fire(context.Background(), tt.status, tt.event, tt.by, tt.at)
				can = lifecycle.Can(tt.status, tt.event)
			})
			if !errors.Is(err, lifecycle.ErrInvalid) || errors.Is(err, lifecycle.ErrForbidden) {
				t.Fatalf("Fire error = %v, want ErrInvalid only", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Fire error = %q, want it to contain %q", err.Error(), tt.wantErr)
			}
			if (tr != lifecycle.Transition{} || next != lifecycle.Status{}) {
				t.Errorf("Fire returned %+v, %+v with an error, want zero values", tr, next)
			}
			if tt.by != "" && !tt.at.IsZero() && can {
				t.Errorf("Can = true, want false")
			}
		})
	}
}

func TestNewRejectsInvalidStatus(t *testing.T) {
	t.Parallel()
	m, err := lifecycle.New(lifecycle.Status{State: "ready"})
	if !errors.Is(err, lifecycle.ErrInvalid) || m != nil {
		t.Errorf("New(ready) = %v, %v; want nil, ErrInvalid", m, err)
	}
}

func TestDoneIsTerminal(t *testing.T) {
	t.Parallel()
	for _, ev := range allEvents {
		if lifecycle.Can(status(lifecycle.Done), ev) {
			t.Errorf("Can(DONE, %s) = true, want false", ev)
		}
	}
}
