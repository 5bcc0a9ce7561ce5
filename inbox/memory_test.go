package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/inbox/inboxtest"
	"github.com/engine-brain/brain/lifecycle"
)

// memoryHarness runs the conformance suite on Memory: one Memory per
// limit, the transitions of each process noted as OnTransition reports
// them.
type memoryHarness struct {
	mu       sync.Mutex
	memories map[int]*inbox.Memory
	of       map[string]*inbox.Memory // by process
	made     int

	trMu        sync.Mutex // taken inside OnTransition, with a Memory locked
	transitions map[string][]lifecycle.Transition
}

func newMemoryHarness(*testing.T) inboxtest.Harness {
	return &memoryHarness{memories: map[int]*inbox.Memory{}, of: map[string]*inbox.Memory{},
		transitions: map[string][]lifecycle.Transition{}}
}

func (h *memoryHarness) Make(t *testing.T, st lifecycle.Status, limit int) (inbox.Inbox, string) {
	t.Helper()
	return h.MakeSteered(t, st, limit, inbox.SteeringQueue)
}

func (h *memoryHarness) MakeSteered(t *testing.T, st lifecycle.Status, limit int, steering inbox.Steering) (inbox.Inbox, string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.memories[limit]
	if !ok {
		m = inbox.NewMemory(inbox.MemoryConfig{Limit: limit, OnTransition: func(pid string, tr lifecycle.Transition) {
			h.trMu.Lock()
			defer h.trMu.Unlock()
			h.transitions[pid] = append(h.transitions[pid], tr)
		}})
		h.memories[limit] = m
	}
	h.made++
	pid := fmt.Sprintf("p%d", h.made)
	if err := m.Create(pid, st, steering); err != nil {
		t.Fatal(err)
	}
	h.of[pid] = m
	return m, pid
}

// memory returns the Memory of process pid.
func (h *memoryHarness) memory(pid string) *inbox.Memory {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.of[pid]
}

func (h *memoryHarness) Transition(t *testing.T, pid string, ev lifecycle.Event) {
	t.Helper()
	if _, err := h.memory(pid).Fire(context.Background(), pid, ev, "operator:olga"); err != nil {
		t.Fatalf("Fire(%s, %s): %v", pid, ev, err)
	}
}

func (h *memoryHarness) Claim(t *testing.T, pid string) {
	t.Helper()
	if _, err := h.memory(pid).Claim(context.Background(), pid, "n1"); err != nil {
		t.Fatalf("Claim(%s): %v", pid, err)
	}
}

func (h *memoryHarness) AwaitApproval(t *testing.T, pid string, calls []conversation.PendingCall) {
	t.Helper()
	if _, err := h.memory(pid).AwaitApproval(context.Background(), pid, "model", calls); err != nil {
		t.Fatalf("AwaitApproval(%s, %v): %v", pid, calls, err)
	}
}

func (h *memoryHarness) Observe(t *testing.T, pid string) inboxtest.Observation {
	t.Helper()
	p, err := h.memory(pid).Get(pid)
	if err != nil {
		t.Fatalf("Get(%s): %v", pid, err)
	}
	o := inboxtest.Observation{Status: p.Status, Queued: p.Queued}
	h.trMu.Lock()
	defer h.trMu.Unlock()
	for _, tr := range h.transitions[pid] {
		if tr.Event == lifecycle.UserInput {
			o.Unblocked = append(o.Unblocked, tr.By)
		}
	}
	return o
}

func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	inboxtest.Run(t, newMemoryHarness)
}

// memory returns a Memory whose clock steps a second from t0 at every
// reading, and the transitions it fires, as they happen.
func memory(t *testing.T, limit int) (*inbox.Memory, *[]string) {
	t.Helper()
	var trs []string
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	m := inbox.NewMemory(inbox.MemoryConfig{
		Limit: limit,
		Clock: func() time.Time { now = now.Add(time.Second); return now },
		OnTransition: func(pid string, tr lifecycle.Transition) {
			trs = append(trs, fmt.Sprintf("%s %s->%s %s by %s at %s", pid, tr.From, tr.To, tr.Event, tr.By, tr.At.Format(time.TimeOnly)))
		},
	})
	return m, &trs
}

func create(t *testing.T, m *inbox.Memory, pid string, st lifecycle.State) {
	t.Helper()
	if err := m.Create(pid, lifecycle.Status{State: st}, inbox.SteeringQueue); err != nil {
		t.Fatal(err)
	}
}

func post(t *testing.T, m *inbox.Memory, pid string, kind conversation.Kind, from, content string) string {
	t.Helper()
	id, _, err := m.Post(context.Background(), pid, inbox.Message{Kind: kind, From: from, Content: content})
	if err != nil {
		t.Fatalf("Post(%s, %q): %v", pid, content, err)
	}
	return id
}

func get(t *testing.T, m *inbox.Memory, pid string) inbox.Process {
	t.Helper()
	p, err := m.Get(pid)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMemoryTurn plays a turn: Claim drains the inbox and takes the process
// off the wake queue; a message that arrives during the turn is judged
// when the turn ends (Fire).
func TestMemoryTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name   string
		during []conversation.Kind // posted while the turn runs
		end    lifecycle.Event
		want   inbox.Process
		trs    []string // after the claim's
	}{
		{"await_user, nothing waiting", nil, lifecycle.AwaitUser,
			inbox.Process{Status: lifecycle.Status{State: lifecycle.Blocked}},
			[]string{"p RUNNING->BLOCKED await_user by engine at 12:00:05"}},
		{"await_user, a user message waiting: unblocked at once", []conversation.Kind{conversation.KindSchedule, conversation.KindUser}, lifecycle.AwaitUser,
			inbox.Process{Status: lifecycle.Status{State: lifecycle.Ready}, Queued: true, Inbox: 2},
			[]string{"p RUNNING->BLOCKED await_user by engine at 12:00:07", "p BLOCKED->READY user_input by user at 12:00:08"}},
		{"await_user, a tick waiting", []conversation.Kind{conversation.KindSchedule}, lifecycle.AwaitUser,
			inbox.Process{Status: lifecycle.Status{State: lifecycle.Blocked}, Inbox: 1},
			[]string{"p RUNNING->BLOCKED await_user by engine at 12:00:06"}},
		{"continue, nothing waiting", nil, lifecycle.Continue,
			inbox.Process{Status: lifecycle.Status{State: lifecycle.Ready}},
			[]string{"p RUNNING->READY continue by engine at 12:00:05"}},
		{"continue, a worker's result waiting", []conversation.Kind{conversation.KindProcessEvent}, lifecycle.Continue,
			inbox.Process{Status: lifecycle.Status{State: lifecycle.Ready}, Queued: true, Inbox: 1},
			[]string{"p RUNNING->READY continue by engine at 12:00:06"}},
		{"finish, a user message waiting", []conversation.Kind{conversation.KindUser}, lifecycle.Finish,
			inbox.Process{Status: lifecycle.Status{State: lifecycle.Done}, Inbox: 1},
			[]string{"p RUNNING->DONE finish by engine at 12:00:06"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, trs := memory(t, 0)
			create(t, m, "p", lifecycle.Blocked)
			first := post(t, m, "p", conversation.KindUser, "user:ada", "hi") // 12:00:01, unblocks at 12:00:02
			second := post(t, m, "p", conversation.KindSystem, "", "note")    // 12:00:03
			msgs, err := m.Claim(ctx, "p", "node:n1")                         // 12:00:04
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, msg := range msgs {
				ids = append(ids, msg.ID)
			}
			if !slices.Equal(ids, []string{first, second}) {
				t.Fatalf("Claim drained %+v, want the two messages", msgs)
			}
			if p := get(t, m, "p"); p.Queued || p.Inbox != 0 || p.Status.State != lifecycle.Running {
				t.Fatalf("after Claim: %+v, want RUNNING, off the queue, nothing pending", p)
			}
			*trs = nil
			for _, k := range tt.during {
				post(t, m, "p", k, "", string(k))
			}
			if _, err := m.Fire(ctx, "p", tt.end, "engine"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, get(t, m, "p")); diff != "" {
				t.Errorf("after the turn (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.trs, *trs); diff != "" {
				t.Errorf("transitions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMemoryClaimNotReady(t *testing.T) {
	t.Parallel()
	m, _ := memory(t, 0)
	create(t, m, "p", lifecycle.Ready)
	post(t, m, "p", conversation.KindUser, "user:ada", "hi")
	if _, err := m.Fire(context.Background(), "p", lifecycle.Pause, "operator:olga"); err != nil {
		t.Fatal(err)
	}
	if p := get(t, m, "p"); !p.Queued {
		t.Fatalf("pause took the process off the queue: %+v", p)
	}
	if _, err := m.Claim(context.Background(), "p", "node:n1"); !errors.Is(err, lifecycle.ErrForbidden) {
		t.Fatalf("Claim of a PAUSED process = %v, want ErrForbidden", err)
	}
	if p := get(t, m, "p"); p.Queued || p.Inbox != 1 {
		t.Errorf("after the claim: %+v; want it off the queue, the message kept", p)
	}
}

func TestMemoryFireRefuses(t *testing.T) {
	t.Parallel()
	m, _ := memory(t, 0)
	create(t, m, "p", lifecycle.Blocked)
	for _, ev := range []lifecycle.Event{lifecycle.Wake, lifecycle.UserInput} {
		if _, err := m.Fire(context.Background(), "p", ev, "operator:olga"); !errors.Is(err, lifecycle.ErrInvalid) {
			t.Errorf("Fire(%s) = %v, want ErrInvalid", ev, err)
		}
	}
	if _, err := m.Fire(context.Background(), "p", lifecycle.Retry, "operator:olga"); !errors.Is(err, lifecycle.ErrForbidden) {
		t.Errorf("Fire(retry) on BLOCKED = %v, want ErrForbidden", err)
	}
	if _, err := m.Fire(context.Background(), "nobody", lifecycle.Pause, "operator:olga"); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Fire on no process = %v, want ErrNotFound", err)
	}
	if err := m.Create("p", lifecycle.Status{State: lifecycle.Ready}, inbox.SteeringQueue); err == nil {
		t.Error("Create of an existing process succeeded")
	}
	if err := m.Create("q", lifecycle.Status{State: lifecycle.Ready, PausedFrom: lifecycle.Blocked}, inbox.SteeringQueue); !errors.Is(err, lifecycle.ErrInvalid) {
		t.Errorf("Create with an invalid status = %v, want ErrInvalid", err)
	}
	if err := m.Delete("p"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Post(context.Background(), "p", inbox.Message{Kind: conversation.KindUser}); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Post after Delete = %v, want ErrNotFound", err)
	}
}

// TestMemoryConcurrentPosts posts from many goroutines at once: every
// message gets its own id, and the limit holds.
func TestMemoryConcurrentPosts(t *testing.T) {
	t.Parallel()
	const senders, each, limit = 8, 50, 300
	m := inbox.NewMemory(inbox.MemoryConfig{Limit: limit})
	create(t, m, "p", lifecycle.Running)
	var wg sync.WaitGroup
	ids := make([][]string, senders)
	full := make([]int, senders)
	for g := range senders {
		wg.Go(func() {
			for n := range each {
				id, _, err := m.Post(context.Background(), "p", inbox.Message{Kind: conversation.KindUser, Content: fmt.Sprint(g, n)})
				switch {
				case errors.Is(err, inbox.ErrFull):
					full[g]++
				case err != nil:
					t.Error(err)
				default:
					ids[g] = append(ids[g], id)
				}
			}
		})
	}
	wg.Wait()
	all := slices.Concat(ids...)
	slices.Sort(all)
	if len(slices.Compact(all)) != limit {
		t.Errorf("%d distinct ids, want %d (the limit)", len(slices.Compact(all)), limit)
	}
	refused := 0
	for _, n := range full {
		refused += n
	}
	if refused != senders*each-limit || get(t, m, "p").Inbox != limit {
		t.Errorf("%d refused, %d pending; want %d and %d", refused, get(t, m, "p").Inbox, senders*each-limit, limit)
	}
}

// TestMemorySteering posts a user's and an operator's message to a RUNNING
// process with each steering and to a BLOCKED one: only a user's message to
// the RUNNING process is refused (reject) or interrupts its turn
// (interrupt), and OnInterrupt hears of it once the message is stored.
func TestMemorySteering(t *testing.T) {
	t.Parallel()
	for _, steering := range inbox.Steerings() {
		t.Run(string(steering), func(t *testing.T) {
			t.Parallel()
			var interrupted []string
			m := inbox.NewMemory(inbox.MemoryConfig{OnInterrupt: func(pid string) { interrupted = append(interrupted, pid) }})
			for pid, st := range map[string]lifecycle.State{"running": lifecycle.Running, "blocked": lifecycle.Blocked} {
				if err := m.Create(pid, lifecycle.Status{State: st}, steering); err != nil {
					t.Fatal(err)
				}
			}
			post(t, m, "running", conversation.KindOperator, "operator:olga", "hurry")
			post(t, m, "blocked", conversation.KindUser, "user:ada", "hello")
			if len(interrupted) != 0 {
				t.Fatalf("interrupted %v by an operator's message and a BLOCKED process's, want none", interrupted)
			}
			id, dup, err := m.Post(context.Background(), "running", inbox.Message{Kind: conversation.KindUser, From: "user:ada", Content: "and?"})
			var busy *inbox.BusyError
			switch steering {
			case inbox.SteeringReject:
				if !errors.Is(err, inbox.ErrBusy) || !errors.As(err, &busy) || busy.PID != "running" || id != "" || dup {
					t.Fatalf("Post = %q, dup %v, %v; want a *BusyError for running", id, dup, err)
				}
				if n := get(t, m, "running").Inbox; n != 1 {
					t.Errorf("%d messages pending, want the operator's alone", n)
				}
			default:
				if err != nil || id == "" {
					t.Fatalf("Post = %q, %v; want a new message", id, err)
				}
				var want []string
				if steering == inbox.SteeringInterrupt {
					want = []string{"running"}
				}
				if diff := cmp.Diff(want, interrupted); diff != "" {
					t.Errorf("interrupted (-want +got):\n%s", diff)
				}
			}
		})
	}
	if err := inbox.NewMemory(inbox.MemoryConfig{}).Create("p", lifecycle.Status{State: lifecycle.Running}, "shout"); err == nil {
		t.Error("Create with steering shout succeeded")
	}
}
