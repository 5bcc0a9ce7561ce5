// Package inboxtest is the conformance suite of package inbox: the wake
// rule, the inbox limit, idempotency and refusals, checked through what an
// implementation of inbox.Inbox does. Every implementation runs it from a
// test of its own package (inbox.Memory in inbox/memory_test.go, the Redis
// store in store/inbox_conformance_test.go) with a Harness that makes
// processes in it.
//
// The suite states the rule on its own (rule below, the table of
// inbox/doc.go), so that an implementation that strays from the documented
// rule fails, even one that follows inbox.OnPost where OnPost strays too.
package inboxtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
)

// A Harness makes processes for the suite in the implementation under test
// and reports on them. The suite makes a new one for each of its tests.
type Harness interface {
	// Make makes a process in status st, with an empty inbox and off the
	// wake queue, and returns the inbox that serves it, whose inboxes hold
	// at most limit messages (0: no limit), and its id. Processes made with
	// the same limit share an inbox.
	Make(t *testing.T, st lifecycle.Status, limit int) (inbox.Inbox, string)
	// MakeSteered is Make for a process whose running turns take a
	// user's messages as steering says, which the implementation keeps
	// with the process from its creation (as a recipe's
	// steering.user_messages). Make makes one with inbox.SteeringQueue.
	MakeSteered(t *testing.T, st lifecycle.Status, limit int, steering inbox.Steering) (inbox.Inbox, string)
	// Claim takes the wake of process pid, made READY and queued, as a
	// node's claim does: the process goes RUNNING, off the wake queue,
	// its inbox drained.
	Claim(t *testing.T, pid string)
	// Transition fires an operator's event on process pid (pause, resume,
	// finish, retry or fail) as the implementation does, and fails the
	// test when it cannot.
	Transition(t *testing.T, pid string, ev lifecycle.Event)
	// Observe reports what the suite checks of process pid besides its
	// inbox.
	Observe(t *testing.T, pid string) Observation
	// AwaitApproval ends a turn of process pid, made RUNNING, as a turn
	// whose tool calls wait for a person's approval does: the process goes
	// BLOCKED waiting for the decisions on calls (see
	// inbox.Memory.AwaitApproval).
	AwaitApproval(t *testing.T, pid string, calls []conversation.PendingCall)
}

// Observation is what the suite checks of a process besides its inbox.
type Observation struct {
	Status lifecycle.Status
	// Queued says the process is on the wake queue.
	Queued bool
	// Unblocked lists the By of every user_input transition of the
	// process, oldest first: who unblocked it.
	Unblocked []string
}

// Run runs the suite; newHarness returns a harness for one of its tests.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	tests := []struct {
		name string
		run  func(*testing.T, func(*testing.T) Harness)
	}{
		{"post", testPost},
		{"limit", testLimit},
		{"closed with a full inbox", testClosedFull},
		{"no limit", testNoLimit},
		{"pause and resume", testResume},
		{"fail and retry", testRetry},
		{"finish", testFinish},
		{"idempotency", testIdempotency},
		{"not found", testNotFound},
		{"messages", testMessages},
		{"approvals", testApprovals},
		{"steering", testSteering},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newHarness)
		})
	}
}

// outcome is what a post does in the suite's statement of the rule.
type outcome int

const (
	closed   outcome = iota // refused with inbox.ErrClosed
	busy                    // refused with an *inbox.BusyError
	stored                  // kept; nothing else
	wakes                   // kept; the process is queued
	unblocks                // kept; user_input by the sender; queued
)

// A cell of the rule: what a post does, and whether the message counts
// against the inbox limit (L in inbox/doc.go).
type cell struct {
	do      outcome
	limited bool
}

// The cells, named for the table of inbox/doc.go: c closed, b busy, s
// stored (steers and interrupts, which only a turn tells from stored,
// too), w wakes, u unblocks; L counts against the limit.
var (
	c_ = cell{do: closed}
	b_ = cell{do: busy}
	s_ = cell{do: stored}
	sL = cell{do: stored, limited: true}
	w_ = cell{do: wakes}
	wL = cell{do: wakes, limited: true}
	u_ = cell{do: unblocks}
)

var (
	ready   = lifecycle.Status{State: lifecycle.Ready}
	running = lifecycle.Status{State: lifecycle.Running}
	blocked = lifecycle.Status{State: lifecycle.Blocked}
	done    = lifecycle.Status{State: lifecycle.Done}
	failed  = lifecycle.Status{State: lifecycle.Failed}
)

func paused(from lifecycle.State) lifecycle.Status {
	return lifecycle.Status{State: lifecycle.Paused, PausedFrom: from}
}

// kinds are the message kinds in the order of rule's columns.
var kinds = [5]conversation.Kind{
	conversation.KindUser, conversation.KindOperator, conversation.KindProcessEvent,
	conversation.KindSchedule, conversation.KindSystem,
}

// A row of the rule: what a post does to a process in status with
// steering, by kind.
type row struct {
	status   lifecycle.Status
	steering inbox.Steering
	cells    [5]cell // by kinds
}

func (r row) of(kind conversation.Kind) cell { return r.cells[slices.Index(kinds[:], kind)] }

func (r row) name() string {
	if r.steering == inbox.SteeringQueue {
		return name(r.status)
	}
	return name(r.status) + ", " + string(r.steering)
}

const (
	queue     = inbox.SteeringQueue
	steer     = inbox.SteeringSteer
	interrupt = inbox.SteeringInterrupt
	reject    = inbox.SteeringReject
)

// rule is the table of inbox/doc.go: what a post does, by the state of the
// process (PAUSED from each state it can be paused in), its steering
// (each while RUNNING; reject, which refuses, in the other states that
// take messages too) and the kind of the message.
var rule = []row{
	{ready, queue, [5]cell{wL, wL, w_, wL, w_}},
	{running, queue, [5]cell{sL, sL, s_, sL, s_}},
	{running, steer, [5]cell{sL, sL, s_, sL, s_}},
	{running, interrupt, [5]cell{sL, sL, s_, sL, s_}},
	{running, reject, [5]cell{b_, sL, s_, sL, s_}},
	{blocked, queue, [5]cell{u_, u_, s_, sL, s_}},
	{paused(lifecycle.Ready), queue, [5]cell{sL, sL, s_, sL, s_}},
	{paused(lifecycle.Running), queue, [5]cell{sL, sL, s_, sL, s_}},
	{paused(lifecycle.Blocked), queue, [5]cell{sL, sL, s_, sL, s_}},
	{ready, reject, [5]cell{wL, wL, w_, wL, w_}},
	{blocked, reject, [5]cell{u_, u_, s_, sL, s_}},
	{paused(lifecycle.Running), reject, [5]cell{sL, sL, s_, sL, s_}},
	{done, queue, [5]cell{c_, c_, c_, c_, c_}},
	{failed, queue, [5]cell{c_, c_, c_, c_, c_}},
}

// from is who sends a message of each kind in the suite; a system notice
// names nobody, so its kind stands in.
var from = map[conversation.Kind]string{
	conversation.KindUser:         "user:ada",
	conversation.KindOperator:     "operator:olga",
	conversation.KindProcessEvent: "process:p_w1",
	conversation.KindSchedule:     "timer:daily",
	conversation.KindSystem:       "",
}

func message(kind conversation.Kind, content string) inbox.Message {
	return inbox.Message{Kind: kind, From: from[kind], Content: content}
}

func tick(content string) inbox.Message { return message(conversation.KindSchedule, content) }

func name(st lifecycle.Status) string {
	if st.PausedFrom != "" {
		return fmt.Sprintf("%s from %s", st.State, st.PausedFrom)
	}
	return string(st.State)
}

// after returns what a process observed as was should be once a post of
// kind did what c says.
func after(was Observation, c cell, kind conversation.Kind) Observation {
	now := was
	now.Unblocked = append([]string(nil), was.Unblocked...)
	switch c.do {
	case wakes:
		now.Queued = true
	case unblocks:
		now.Status, now.Queued = ready, true
		sender := from[kind]
		if sender == "" {
			sender = string(kind)
		}
		now.Unblocked = append(now.Unblocked, sender)
	}
	return now
}

// check compares what process pid is with what the suite wants of it.
func check(t *testing.T, h Harness, in inbox.Inbox, pid string, want Observation, pending []string) {
	t.Helper()
	got := h.Observe(t, pid)
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("process %s (-want +got):\n%s", pid, diff)
	}
	if diff := cmp.Diff(pending, contents(t, in, pid)); diff != "" {
		t.Errorf("inbox of %s (-want +got):\n%s", pid, diff)
	}
}

// contents returns the pending messages of pid as "kind content", oldest
// first.
func contents(t *testing.T, in inbox.Inbox, pid string) []string {
	t.Helper()
	msgs, err := in.Inbox(context.Background(), pid)
	if err != nil {
		t.Fatalf("Inbox(%s): %v", pid, err)
	}
	out := []string{}
	for _, m := range msgs {
		out = append(out, string(m.Kind)+" "+m.Content)
	}
	return out
}

func post(t *testing.T, in inbox.Inbox, pid string, m inbox.Message) string {
	t.Helper()
	id, dup, err := in.Post(context.Background(), pid, m)
	if err != nil || dup || id == "" {
		t.Fatalf("Post(%s, %s %q) = %q, dup %v, %v; want a new message", pid, m.Kind, m.Content, id, dup, err)
	}
	return id
}

// testPost posts each kind of message to a process in each state.
func testPost(t *testing.T, newHarness func(*testing.T) Harness) {
	for _, row := range rule {
		for _, kind := range kinds {
			c := row.of(kind)
			t.Run(row.name()+"/"+string(kind), func(t *testing.T) {
				t.Parallel()
				h := newHarness(t)
				in, pid := h.MakeSteered(t, row.status, 0, row.steering)
				was := Observation{Status: row.status}
				check(t, h, in, pid, was, []string{})
				m := message(kind, "hello")
				switch c.do {
				case closed:
					if id, dup, err := in.Post(context.Background(), pid, m); !errors.Is(err, inbox.ErrClosed) || id != "" || dup {
						t.Fatalf("Post = %q, dup %v, %v; want ErrClosed", id, dup, err)
					}
					check(t, h, in, pid, was, []string{})
					return
				case busy:
					refusedBusy(t, in, pid, m)
					check(t, h, in, pid, was, []string{})
					return
				}
				id, dup, err := in.Post(context.Background(), pid, m)
				if err != nil || id == "" || dup {
					t.Fatalf("Post = %q, dup %v, %v; want a new message", id, dup, err)
				}
				check(t, h, in, pid, after(was, c, kind), []string{string(kind) + " hello"})
			})
		}
	}
}

// refusedBusy checks that m, posted to pid, is refused with an
// *inbox.BusyError.
func refusedBusy(t *testing.T, in inbox.Inbox, pid string, m inbox.Message) {
	t.Helper()
	id, dup, err := in.Post(context.Background(), pid, m)
	var be *inbox.BusyError
	if !errors.Is(err, inbox.ErrBusy) || !errors.As(err, &be) || be.PID != pid || id != "" || dup {
		t.Fatalf("Post(%s %q) = %q, dup %v, %v; want an *inbox.BusyError for %s", m.Kind, m.Content, id, dup, err, pid)
	}
}

// testLimit posts each kind of message to a full inbox in each state that
// takes messages: those that count against the limit are refused.
func testLimit(t *testing.T, newHarness func(*testing.T) Harness) {
	const limit = 2
	for _, row := range rule {
		fill := row.of(conversation.KindSchedule) // the ticks that fill the inbox
		if fill.do == closed {
			continue
		}
		for _, kind := range kinds {
			c := row.of(kind)
			t.Run(row.name()+"/"+string(kind), func(t *testing.T) {
				t.Parallel()
				h := newHarness(t)
				in, pid := h.MakeSteered(t, row.status, limit, row.steering)
				full := Observation{Status: row.status}
				pending := []string{}
				for n := range limit {
					post(t, in, pid, tick(fmt.Sprint("tick ", n)))
					full = after(full, fill, conversation.KindSchedule)
					pending = append(pending, fmt.Sprint("schedule tick ", n))
				}
				check(t, h, in, pid, full, pending)
				if c.do == busy { // refused as busy, not as full
					refusedBusy(t, in, pid, message(kind, "one more"))
					check(t, h, in, pid, full, pending)
					return
				}
				id, dup, err := in.Post(context.Background(), pid, message(kind, "one more"))
				if c.limited {
					var fe *inbox.FullError
					if !errors.Is(err, inbox.ErrFull) || !errors.As(err, &fe) || fe.PID != pid || fe.Limit != limit || id != "" || dup {
						t.Fatalf("Post = %q, dup %v, %v; want an *inbox.FullError for %s, limit %d", id, dup, err, pid, limit)
					}
					check(t, h, in, pid, full, pending)
					return
				}
				if err != nil || id == "" || dup {
					t.Fatalf("Post = %q, dup %v, %v; want it taken beyond the limit", id, dup, err)
				}
				check(t, h, in, pid, after(full, c, kind), append(pending, string(kind)+" one more"))
			})
		}
	}
}

// testClosedFull checks that a closed process with a full inbox is closed,
// not full.
func testClosedFull(t *testing.T, newHarness func(*testing.T) Harness) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			in, pid := h.Make(t, blocked, 1)
			post(t, in, pid, tick("tick"))
			h.Transition(t, pid, lifecycle.Finish)
			if _, _, err := in.Post(context.Background(), pid, message(kind, "late")); !errors.Is(err, inbox.ErrClosed) {
				t.Fatalf("Post to DONE with a full inbox = %v, want ErrClosed", err)
			}
			check(t, h, in, pid, Observation{Status: done}, []string{"schedule tick"})
		})
	}
}

// testNoLimit checks that a limit of 0 refuses nothing.
func testNoLimit(t *testing.T, newHarness func(*testing.T) Harness) {
	h := newHarness(t)
	in, pid := h.Make(t, paused(lifecycle.Blocked), 0)
	want := []string{}
	for n := range 50 {
		post(t, in, pid, message(conversation.KindUser, fmt.Sprint(n)))
		want = append(want, fmt.Sprint("user ", n))
	}
	check(t, h, in, pid, Observation{Status: paused(lifecycle.Blocked)}, want)
}

// testResume pauses a process, posts to it, and resumes it: the messages
// wait while it is paused and are judged by the rule when it resumes.
func testResume(t *testing.T, newHarness func(*testing.T) Harness) {
	user, operator := conversation.KindUser, conversation.KindOperator
	event, schedule, system := conversation.KindProcessEvent, conversation.KindSchedule, conversation.KindSystem
	tests := []struct {
		name  string
		from  lifecycle.Status
		posts []conversation.Kind
		want  Observation // after resume
	}{
		{"READY, nothing", ready, nil, Observation{Status: ready}},
		{"READY, a user message wakes it", ready, []conversation.Kind{user}, Observation{Status: ready, Queued: true}},
		{"READY, a tick wakes it", ready, []conversation.Kind{schedule}, Observation{Status: ready, Queued: true}},
		{"READY, a worker's result wakes it", ready, []conversation.Kind{event}, Observation{Status: ready, Queued: true}},
		{"BLOCKED, nothing", blocked, nil, Observation{Status: blocked}},
		{"BLOCKED, a user message unblocks it", blocked, []conversation.Kind{user},
			Observation{Status: ready, Queued: true, Unblocked: []string{"user:ada"}}},
		{"BLOCKED, an operator message unblocks it", blocked, []conversation.Kind{operator},
			Observation{Status: ready, Queued: true, Unblocked: []string{"operator:olga"}}},
		{"BLOCKED, the first unblocking message's sender unblocks it", blocked, []conversation.Kind{schedule, operator, user},
			Observation{Status: ready, Queued: true, Unblocked: []string{"operator:olga"}}},
		{"BLOCKED, the others wait", blocked, []conversation.Kind{schedule, event, system}, Observation{Status: blocked}},
		{"RUNNING comes back READY, nothing", running, nil, Observation{Status: ready}},
		{"RUNNING comes back READY, woken", running, []conversation.Kind{system}, Observation{Status: ready, Queued: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			in, pid := h.Make(t, tt.from, 0)
			h.Transition(t, pid, lifecycle.Pause)
			pending := []string{}
			for i, k := range tt.posts {
				post(t, in, pid, message(k, fmt.Sprint(i)))
				pending = append(pending, fmt.Sprint(k, " ", i))
			}
			check(t, h, in, pid, Observation{Status: paused(tt.from.State)}, pending)
			h.Transition(t, pid, lifecycle.Resume)
			check(t, h, in, pid, tt.want, pending)
		})
	}
}

// testRetry fails a RUNNING process that has a message waiting and retries
// it: the message wakes it.
func testRetry(t *testing.T, newHarness func(*testing.T) Harness) {
	for _, posted := range []bool{false, true} {
		t.Run(fmt.Sprint("message waiting: ", posted), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			in, pid := h.Make(t, running, 0)
			pending := []string{}
			if posted {
				post(t, in, pid, message(conversation.KindUser, "are you there?"))
				pending = append(pending, "user are you there?")
			}
			h.Transition(t, pid, lifecycle.Fail)
			check(t, h, in, pid, Observation{Status: failed}, pending)
			h.Transition(t, pid, lifecycle.Retry)
			check(t, h, in, pid, Observation{Status: ready, Queued: posted}, pending)
		})
	}
}

// testFinish closes a paused process holding a message: the message stays,
// and nothing more is taken.
func testFinish(t *testing.T, newHarness func(*testing.T) Harness) {
	h := newHarness(t)
	in, pid := h.Make(t, blocked, 0)
	h.Transition(t, pid, lifecycle.Pause)
	post(t, in, pid, message(conversation.KindUser, "hello"))
	h.Transition(t, pid, lifecycle.Finish)
	if _, _, err := in.Post(context.Background(), pid, message(conversation.KindProcessEvent, "late")); !errors.Is(err, inbox.ErrClosed) {
		t.Fatalf("Post to DONE = %v, want ErrClosed", err)
	}
	check(t, h, in, pid, Observation{Status: done}, []string{"user hello"})
}

// testIdempotency checks that a repeated key returns the first message's
// id and adds nothing, before any refusal.
func testIdempotency(t *testing.T, newHarness func(*testing.T) Harness) {
	keyed := func(kind conversation.Kind, content, key string) inbox.Message {
		m := message(kind, content)
		m.IdempotencyKey = key
		return m
	}
	repeat := func(t *testing.T, in inbox.Inbox, pid string, m inbox.Message, first string) {
		t.Helper()
		if id, dup, err := in.Post(context.Background(), pid, m); err != nil || !dup || id != first {
			t.Fatalf("repeated key %s: Post = %q, dup %v, %v; want the first message's id %q, dup", m.IdempotencyKey, id, dup, err, first)
		}
	}
	t.Run("a repeat adds nothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, pid := h.Make(t, blocked, 0)
		first := post(t, in, pid, keyed(conversation.KindUser, "once", "k1"))
		repeat(t, in, pid, keyed(conversation.KindUser, "twice", "k1"), first)
		repeat(t, in, pid, keyed(conversation.KindSchedule, "thrice", "k1"), first)
		check(t, h, in, pid, Observation{Status: ready, Queued: true, Unblocked: []string{"user:ada"}}, []string{"user once"})
		if other := post(t, in, pid, keyed(conversation.KindUser, "again", "k2")); other == first {
			t.Errorf("a new key returned the first message's id %q", first)
		}
		check(t, h, in, pid, Observation{Status: ready, Queued: true, Unblocked: []string{"user:ada"}}, []string{"user once", "user again"})
	})
	t.Run("keys are per process", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, a := h.Make(t, paused(lifecycle.Blocked), 0)
		other, b := h.Make(t, paused(lifecycle.Blocked), 0)
		post(t, in, a, keyed(conversation.KindUser, "to a", "k1"))
		post(t, other, b, keyed(conversation.KindUser, "to b", "k1"))
		check(t, h, other, b, Observation{Status: paused(lifecycle.Blocked)}, []string{"user to b"})
	})
	t.Run("a repeat to a full inbox", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, pid := h.Make(t, paused(lifecycle.Blocked), 1)
		first := post(t, in, pid, keyed(conversation.KindUser, "once", "k1"))
		repeat(t, in, pid, keyed(conversation.KindUser, "once", "k1"), first)
		check(t, h, in, pid, Observation{Status: paused(lifecycle.Blocked)}, []string{"user once"})
	})
	t.Run("a repeat to a closed process", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, pid := h.Make(t, blocked, 0)
		first := post(t, in, pid, keyed(conversation.KindSchedule, "tick", "k1"))
		h.Transition(t, pid, lifecycle.Finish)
		repeat(t, in, pid, keyed(conversation.KindSchedule, "tick", "k1"), first)
		check(t, h, in, pid, Observation{Status: done}, []string{"schedule tick"})
	})
	t.Run("a refused post keeps no key", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		in, pid := h.Make(t, failed, 0)
		if _, _, err := in.Post(context.Background(), pid, keyed(conversation.KindUser, "early", "k1")); !errors.Is(err, inbox.ErrClosed) {
			t.Fatalf("Post to FAILED = %v, want ErrClosed", err)
		}
		h.Transition(t, pid, lifecycle.Retry)
		post(t, in, pid, keyed(conversation.KindUser, "now", "k1"))
		check(t, h, in, pid, Observation{Status: ready, Queued: true}, []string{"user now"})
	})
}

// testNotFound posts to and reads the inbox of a process that does not
// exist.
func testNotFound(t *testing.T, newHarness func(*testing.T) Harness) {
	h := newHarness(t)
	in, _ := h.Make(t, blocked, 0)
	const nobody = "p_nobody"
	for _, kind := range kinds {
		if _, _, err := in.Post(context.Background(), nobody, message(kind, "hello?")); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("Post(%s) to no process = %v, want ErrNotFound", kind, err)
		}
	}
	if _, err := in.Inbox(context.Background(), nobody); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Inbox of no process = %v, want ErrNotFound", err)
	}
}

// testMessages checks that a message comes back from Inbox as it was
// posted, with its id and trace parent and without its key, and that an
// invalid one is refused.
func testMessages(t *testing.T, newHarness func(*testing.T) Harness) {
	h := newHarness(t)
	in, pid := h.Make(t, paused(lifecycle.Blocked), 0)
	at := time.Date(2025, 3, 1, 12, 0, 0, int(7*time.Millisecond), time.UTC)
	first := inbox.Message{Kind: conversation.KindUser, From: "user:ada", Content: "hi\nthere", At: at, IdempotencyKey: "k1",
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	second := inbox.Message{Kind: conversation.KindSystem, Content: "a notice"}
	id1, id2 := post(t, in, pid, first), post(t, in, pid, second)
	if id1 == id2 {
		t.Fatalf("two messages got the same id %q", id1)
	}
	if _, _, err := in.Post(context.Background(), pid, inbox.Message{Kind: "shout", Content: "HEY"}); err == nil {
		t.Error("Post of kind shout succeeded")
	}
	if _, _, err := in.Post(context.Background(), pid, inbox.Message{Kind: conversation.KindUser, TraceParent: strings.Repeat("0", 300)}); err == nil {
		t.Error("Post with a trace parent of 300 bytes succeeded")
	}
	got, err := in.Inbox(context.Background(), pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 2 && got[1].At.IsZero() {
		t.Errorf("a message posted without a time has none: %+v", got[1])
	}
	first.ID, first.IdempotencyKey = id1, ""
	second.ID = id2
	if len(got) == 2 {
		second.At = got[1].At
	}
	if diff := cmp.Diff([]inbox.Message{first, second}, got); diff != "" {
		t.Errorf("Inbox (-posted +got):\n%s", diff)
	}
}

// testSteering follows a user's messages to a process that refuses them
// while a turn runs (steering reject): one taken before the turn is
// repeated with its key during it and answers as a repeat, not as busy; one
// refused keeps no key and is taken with it once the turn is over; an
// operator's message is taken meanwhile.
func testSteering(t *testing.T, newHarness func(*testing.T) Harness) {
	h := newHarness(t)
	in, pid := h.MakeSteered(t, blocked, 0, reject)
	keyed := func(kind conversation.Kind, content, key string) inbox.Message {
		m := message(kind, content)
		m.IdempotencyKey = key
		return m
	}
	first := post(t, in, pid, keyed(conversation.KindUser, "hello", "k1"))
	h.Claim(t, pid)
	unblocked := []string{"user:ada"}
	check(t, h, in, pid, Observation{Status: running, Unblocked: unblocked}, []string{})
	if id, dup, err := in.Post(context.Background(), pid, keyed(conversation.KindUser, "hello", "k1")); err != nil || !dup || id != first {
		t.Fatalf("the first message again with its key during the turn = %q, dup %v, %v; want %q, dup", id, dup, err, first)
	}
	refusedBusy(t, in, pid, keyed(conversation.KindUser, "and?", "k2"))
	post(t, in, pid, message(conversation.KindOperator, "hurry"))
	check(t, h, in, pid, Observation{Status: running, Unblocked: unblocked}, []string{"operator hurry"})
	h.Transition(t, pid, lifecycle.Fail)
	h.Transition(t, pid, lifecycle.Retry)
	if id, dup, err := in.Post(context.Background(), pid, keyed(conversation.KindUser, "and?", "k2")); err != nil || dup || id == "" || id == first {
		t.Fatalf("the refused message again with its key after the turn = %q, dup %v, %v; want a new message", id, dup, err)
	}
	check(t, h, in, pid, Observation{Status: ready, Queued: true, Unblocked: unblocked}, []string{"operator hurry", "user and?"})
}
