package store_test

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

func TestCreate(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r, err := e.s.Create(e.ctx, store.NewProcess{
		Recipe: "assistant", Engine: engine, Owner: "alice", Parent: "p_parent", Depth: 2,
		Metadata: map[string]string{"team": "blue"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^p_[a-z2-7]{16}$`).MatchString(r.ID) {
		t.Errorf("generated id %q, want p_ and 16 base32 characters", r.ID)
	}
	want := store.Record{
		ID: r.ID, Recipe: "assistant", Engine: engine, Status: lifecycle.Status{State: lifecycle.Blocked},
		Version: 1, Parent: "p_parent", Depth: 2, Owner: "alice",
		CreatedAt: t0.Add(time.Millisecond), UpdatedAt: t0.Add(time.Millisecond),
		Metadata: map[string]string{"team": "blue"}, Steering: inbox.SteeringQueue,
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Create (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(r, e.get(t, r.ID)); diff != "" {
		t.Errorf("Get differs from Create (-create +get):\n%s", diff)
	}
	if n := len(e.log(t, r.ID)); n != 0 {
		t.Errorf("a new process has %d events", n)
	}

	in := user("hello")
	ready, err := e.s.Create(e.ctx, store.NewProcess{ID: "p2", Recipe: "assistant", Engine: engine, Input: &in})
	if err != nil {
		t.Fatal(err)
	}
	if ready.Status.State != lifecycle.Ready || !ready.Queued || e.wakeEntries(t) != 1 {
		t.Errorf("with input: %s queued %v, %d wakes; want READY, queued", ready.Status, ready.Queued, e.wakeEntries(t))
	}
	if diff := cmp.Diff([]string{"hello"}, e.inbox(t, "p2")); diff != "" {
		t.Errorf("inbox (-want +got):\n%s", diff)
	}
	if _, err := e.s.Create(e.ctx, store.NewProcess{ID: "p2", Recipe: "x", Engine: engine}); !errors.Is(err, store.ErrExists) {
		t.Errorf("Create of an existing id = %v, want ErrExists", err)
	}
	if r := e.get(t, "p2"); r.Recipe != "assistant" {
		t.Errorf("existing process overwritten: %+v", r)
	}
}

func TestCreateInvalid(t *testing.T) {
	t.Parallel()
	e := setup(t)
	bad := user("x")
	bad.Kind = "shout"
	tests := map[string]store.NewProcess{
		"no recipe":     {Engine: engine},
		"no engine":     {Recipe: "r"},
		"engine colon":  {Recipe: "r", Engine: "a:b"},
		"id with brace": {ID: "a}b", Recipe: "r", Engine: engine},
		"id with bar":   {ID: "a|b", Recipe: "r", Engine: engine},
		"depth":         {Recipe: "r", Engine: engine, Depth: -1},
		"bad input":     {Recipe: "r", Engine: engine, Input: &bad},
		"bad steering":  {Recipe: "r", Engine: engine, Steering: "shout"},
	}
	for name, p := range tests {
		if _, err := e.s.Create(e.ctx, p); err == nil {
			t.Errorf("%s: Create succeeded", name)
		}
	}
}

// TestCreateSteering checks that a process keeps the steering it was
// created with, and that the default, queue, is no field of its record.
func TestCreateSteering(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, steering := range append(inbox.Steerings(), "") {
		pid := "p_" + string(steering)
		r, err := e.s.Create(e.ctx, store.NewProcess{ID: pid, Recipe: "r", Engine: engine, Steering: steering})
		if err != nil {
			t.Fatal(err)
		}
		want := steering
		if want == "" {
			want = inbox.SteeringQueue
		}
		if got := e.get(t, pid).Steering; r.Steering != want || got != want {
			t.Errorf("created with %q: Create says %q, Get %q; want %q", steering, r.Steering, got, want)
		}
		field, err := e.rdb.HGet(e.ctx, e.key(pid, "proc"), "steering").Result()
		switch {
		case want == inbox.SteeringQueue && !errors.Is(err, redis.Nil):
			t.Errorf("created with %q: the record's steering is %q (%v); want no field", steering, field, err)
		case want != inbox.SteeringQueue && field != string(want):
			t.Errorf("created with %q: the record's steering is %q (%v); want %q", steering, field, err, want)
		}
	}
}

func TestGetNotFound(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, pid := range []string{"nobody", "", "a{b}"} {
		if _, err := e.s.Get(e.ctx, pid); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", pid, err)
		}
		if _, err := e.s.Log(e.ctx, pid, "", 0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Log(%q) = %v, want ErrNotFound", pid, err)
		}
	}
}

func TestLogPaging(t *testing.T) {
	t.Parallel()
	e := setup(t)
	in := user("hi")
	e.create(t, "p1", &in)
	e.commit(t, e.claim(t, "p1", "t1"), lifecycle.AwaitUser, chat("a"), chat("b"))
	all := e.log(t, "p1")
	if len(all) != 6 {
		t.Fatalf("log has %d events, want 6", len(all))
	}
	page, err := e.s.Log(e.ctx, "p1", all[1].ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all[2:4], page); diff != "" {
		t.Errorf("Log(after %s, 2) (-want +got):\n%s", all[1].ID, diff)
	}
	if rest, _ := e.s.Log(e.ctx, "p1", all[5].ID, 0); len(rest) != 0 {
		t.Errorf("Log after the last event = %v", rest)
	}
}

func TestTransition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		state   lifecycle.State
		events  []lifecycle.Event
		want    lifecycle.Status
		wantErr error
	}{
		{"pause BLOCKED", lifecycle.Blocked, []lifecycle.Event{lifecycle.Pause}, lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Blocked}, nil},
		{"pause and resume", lifecycle.Blocked, []lifecycle.Event{lifecycle.Pause, lifecycle.Resume}, lifecycle.Status{State: lifecycle.Blocked}, nil},
		{"pause RUNNING", lifecycle.Running, []lifecycle.Event{lifecycle.Pause}, lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Running}, nil},
		{"stop", lifecycle.Ready, []lifecycle.Event{lifecycle.Finish}, lifecycle.Status{State: lifecycle.Done}, nil},
		{"retry", lifecycle.Failed, []lifecycle.Event{lifecycle.Retry}, lifecycle.Status{State: lifecycle.Ready}, nil},
		{"resume not paused", lifecycle.Blocked, []lifecycle.Event{lifecycle.Resume}, lifecycle.Status{}, lifecycle.ErrForbidden},
		{"retry DONE", lifecycle.Done, []lifecycle.Event{lifecycle.Retry}, lifecycle.Status{}, lifecycle.ErrForbidden},
		{"fail BLOCKED", lifecycle.Blocked, []lifecycle.Event{lifecycle.Fail}, lifecycle.Status{}, lifecycle.ErrForbidden},
		{"wake is the runtime's", lifecycle.Ready, []lifecycle.Event{lifecycle.Wake}, lifecycle.Status{}, lifecycle.ErrInvalid},
		{"user_input is the wake rule's", lifecycle.Blocked, []lifecycle.Event{lifecycle.UserInput}, lifecycle.Status{}, lifecycle.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			pid := e.processIn(t, "p1", tt.state)
			before := e.get(t, pid)
			var (
				tr  lifecycle.Transition
				r   store.Record
				err error
			)
			for _, ev := range tt.events {
				if tr, r, err = e.s.Transition(e.ctx, pid, ev, "operator:bob"); err != nil {
					break
				}
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Transition = %v, want %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(before, e.get(t, pid)); diff != "" {
					t.Errorf("refused transition changed the record:\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tt.want || r.Version != before.Version+int64(len(tt.events)) {
				t.Errorf("record %s v%d, want %s v%d", r.Status, r.Version, tt.want, before.Version+int64(len(tt.events)))
			}
			last := e.log(t, pid)
			sc := last[len(last)-1]
			wantTr := lifecycle.Transition{From: lifecycle.State(sc.StateChange.From), To: r.Status.State, Event: tt.events[len(tt.events)-1], By: "operator:bob", At: sc.At}
			if diff := cmp.Diff(wantTr, tr, cmpopts.EquateApproxTime(0)); diff != "" || sc.By != "operator:bob" {
				t.Errorf("transition (-logged +returned):\n%s (by %s)", diff, sc.By)
			}
			recs, _, err := e.s.List(e.ctx, r.Status.State, "", 10)
			if err != nil || len(recs) != 1 {
				t.Errorf("List(%s) = %v, %v; want the process", r.Status.State, recs, err)
			}
		})
	}
	t.Run("unknown process", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		if _, _, err := e.s.Transition(e.ctx, "ghost", lifecycle.Pause, "operator:bob"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Transition = %v, want ErrNotFound", err)
		}
	})
}

// TestTransitionConcurrent pauses and resumes one process from many
// goroutines: every change is applied whole, the version counts them, and
// the log holds one state change per applied transition.
func TestTransitionConcurrent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.processIn(t, "p1", lifecycle.Blocked)
	before := e.get(t, pid)
	var applied, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		ev := lifecycle.Pause
		if i%2 == 1 {
			ev = lifecycle.Resume
		}
		wg.Go(func() {
			for range 10 {
				_, _, err := e.s.Transition(e.ctx, pid, ev, "operator:bob")
				switch {
				case err == nil:
					applied.Add(1)
				case errors.Is(err, lifecycle.ErrForbidden), errors.Is(err, store.ErrConflict):
					refused.Add(1)
				default:
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	r := e.get(t, pid)
	if r.Version-before.Version != applied.Load() {
		t.Errorf("version moved by %d, %d transitions applied", r.Version-before.Version, applied.Load())
	}
	if n := int64(len(e.log(t, pid))); n != applied.Load() {
		t.Errorf("log has %d state changes, %d transitions applied", n, applied.Load())
	}
	if applied.Load()+refused.Load() != 80 {
		t.Errorf("applied %d + refused %d, want 80", applied.Load(), refused.Load())
	}
}

// With an OwnerLimit, an owner's create beyond it is refused and stores
// nothing; finished processes count until deleted; a process without an
// owner is not counted, nor limited; a create of an id that exists answers
// ErrExists, as without the limit.
func TestCreateOwnerLimit(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	s, err := store.New(rdb, store.Config{OwnerLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	create := func(id, owner string) error {
		_, err := s.Create(ctx, store.NewProcess{ID: id, Recipe: "r", Engine: engine, Owner: owner})
		return err
	}
	for _, id := range []string{"a1", "a2"} {
		if err := create(id, "ada"); err != nil {
			t.Fatal(err)
		}
	}
	if err := create("a2", "ada"); !errors.Is(err, store.ErrExists) {
		t.Errorf("create of an id that exists: %v, want ErrExists", err)
	}
	var limit *store.OwnerLimitError
	if err := create("a3", "ada"); !errors.As(err, &limit) || !errors.Is(err, store.ErrOwnerLimit) || limit.Owner != "ada" || limit.Limit != 2 {
		t.Fatalf("ada's third process: %v, want an OwnerLimitError of ada, 2", err)
	}
	if _, err := s.Get(ctx, "a3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused process: %v, want ErrNotFound", err)
	}
	for _, id := range []string{"b1", "n1", "n2", "n3"} {
		owner := ""
		if id == "b1" {
			owner = "bob"
		}
		if err := create(id, owner); err != nil {
			t.Errorf("create %s (owner %q): %v", id, owner, err)
		}
	}
	if _, _, err := s.Transition(ctx, "a1", lifecycle.Finish, "operator"); err != nil {
		t.Fatal(err)
	}
	if err := create("a3", "ada"); !errors.Is(err, store.ErrOwnerLimit) {
		t.Errorf("ada's third process with one DONE: %v, want ErrOwnerLimit", err)
	}
	if _, _, err := s.Delete(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if err := create("a3", "ada"); err != nil {
		t.Errorf("ada's process once one was deleted: %v", err)
	}
}
