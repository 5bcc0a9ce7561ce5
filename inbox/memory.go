package inbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
)

// MemoryConfig configures a Memory. Zero values take the defaults named
// below.
type MemoryConfig struct {
	// Limit is the most messages the inbox of a process holds (0 or less:
	// no limit); see Effect.Bounded.
	Limit int
	// Clock stamps the messages posted without a time and the transitions
	// the memory fires (default time.Now). It is read when one needs it,
	// once for each.
	Clock func() time.Time
	// OnTransition, when set, is told of every transition the memory
	// fires (Claim's wake, Fire's event, the wake rule's user_input) as it
	// happens. It is called with the memory locked: it must not call the
	// memory.
	OnTransition func(pid string, tr lifecycle.Transition)
	// OnInterrupt, when set, is told of every message that asks the node
	// running process pid's turn to cut its model call in flight
	// (Effect.Interrupt), once the message is stored; Memory runs no turn
	// to cut. It is called with the memory locked: it must not call the
	// memory.
	OnInterrupt func(pid string)
}

// Memory is an Inbox in memory, for offline play and tests: processes with
// a lifecycle status and a steering, their pending messages, their queued
// mark (on the wake queue or not) and their idempotency keys, under one
// limit. Post applies the wake rule as the Redis store does (both pass the
// suite of package inboxtest). Memory plays as much of a turn as the rule
// needs: Claim takes the wake and the inbox (READY → RUNNING), Fire the
// event a turn ends with or an operator's, after which the rule judges the
// inbox again.
//
// Unlike the store, Memory keeps idempotency keys for its whole life (the
// store forgets one a day after its last use) and knows no leases: a turn
// ending while its process is paused is the store's to settle (Commit).
// It is safe for concurrent use.
type Memory struct {
	cfg   MemoryConfig
	mu    sync.Mutex
	procs map[string]*memProcess
}

var _ Inbox = (*Memory)(nil)

// memProcess is a process in a Memory.
type memProcess struct {
	status   lifecycle.Status
	steering Steering
	waiting  Waiting
	calls    map[string]string // calls waiting for approval: who may decide each, "" once decided
	queued   bool
	pending  []Message
	keys     map[string]string // idempotency key → the first message's id
	sent     int               // messages taken so far: the last id
}

// NewMemory returns an empty Memory.
func NewMemory(cfg MemoryConfig) *Memory {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return &Memory{cfg: cfg, procs: make(map[string]*memProcess)}
}

// Process is what a Memory holds of a process, besides its messages.
type Process struct {
	Status lifecycle.Status
	// Waiting is what the process waits for when BLOCKED.
	Waiting Waiting
	// Queued says the process is on the wake queue.
	Queued bool
	// Inbox counts the pending messages.
	Inbox int
}

// Create adds process pid in status st, with an empty inbox and off the
// wake queue, whose running turns take a user's messages as steering says
// ("" is SteeringQueue).
func (m *Memory) Create(pid string, st lifecycle.Status, steering Steering) error {
	if err := st.Validate(); err != nil {
		return fmt.Errorf("inbox: create %s: %w", pid, err)
	}
	if err := steering.Validate(); err != nil {
		return fmt.Errorf("inbox: create %s: %w", pid, err)
	}
	if steering == "" {
		steering = SteeringQueue
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.procs[pid]; ok {
		return fmt.Errorf("inbox: create %s: the process exists", pid)
	}
	m.procs[pid] = &memProcess{status: st, steering: steering, keys: make(map[string]string)}
	return nil
}

// Delete removes process pid, its inbox and its keys.
func (m *Memory) Delete(pid string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.procs[pid]; !ok {
		return notFound(pid)
	}
	delete(m.procs, pid)
	return nil
}

// Get returns what the memory holds of process pid.
func (m *Memory) Get(pid string) (Process, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[pid]
	if !ok {
		return Process{}, notFound(pid)
	}
	return Process{Status: p.status, Waiting: p.waiting, Queued: p.queued, Inbox: len(p.pending)}, nil
}

// Post adds msg to the inbox of process pid and applies the wake rule
// (OnPost), as Inbox says. Its id is the number of messages the process
// was sent, counting this one ("1", "2", ...).
func (m *Memory) Post(ctx context.Context, pid string, msg Message) (string, bool, error) {
	if err := msg.Validate(); err != nil {
		return "", false, fmt.Errorf("inbox: post to %s: %w", pid, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[pid]
	if !ok {
		return "", false, notFound(pid)
	}
	if id, ok := p.keys[msg.IdempotencyKey]; ok {
		return id, true, nil
	}
	e := OnPost(p.status.State, p.waiting, msg.Kind, p.steering)
	switch {
	case errors.Is(e.Err, ErrBusy):
		return "", false, &BusyError{PID: pid}
	case e.Err != nil:
		return "", false, fmt.Errorf("%w: process %q takes no more messages", e.Err, pid)
	case e.Bounded && m.cfg.Limit > 0 && len(p.pending) >= m.cfg.Limit:
		return "", false, &FullError{PID: pid, Limit: m.cfg.Limit}
	}
	if d, ok := msg.Decision(); ok {
		by, pending := p.calls[d.CallID]
		switch {
		case !pending || by == "":
			return "", false, &NotPendingError{PID: pid, CallID: d.CallID, Decided: pending}
		case by == conversation.ApproverOperator && msg.Decider() != conversation.ApproverOperator:
			return "", false, &OperatorOnlyError{PID: pid, CallID: d.CallID}
		}
		p.calls[d.CallID] = ""
	}
	if msg.At.IsZero() {
		msg.At = m.cfg.Clock()
	}
	if err := m.apply(ctx, pid, p, e, msg.Sender()); err != nil {
		return "", false, fmt.Errorf("inbox: post to %s: %w", pid, err)
	}
	p.sent++
	msg.ID = strconv.Itoa(p.sent)
	if key := msg.IdempotencyKey; key != "" {
		p.keys[key] = msg.ID
		msg.IdempotencyKey = ""
	}
	p.pending = append(p.pending, msg)
	if e.Interrupt && m.cfg.OnInterrupt != nil {
		m.cfg.OnInterrupt(pid)
	}
	return msg.ID, false, nil
}

// Inbox returns the pending messages of process pid, oldest first.
func (m *Memory) Inbox(_ context.Context, pid string) ([]Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[pid]
	if !ok {
		return nil, notFound(pid)
	}
	return slices.Clone(p.pending), nil
}

// Claim takes the wake of process pid, as a node's claim does: a READY
// process fires wake (by by), leaves the wake queue and gives up its
// pending messages, which Claim returns, oldest first (the drain). A
// process that is not READY leaves the queue too, and Claim returns the
// lifecycle's error (lifecycle.ErrForbidden).
func (m *Memory) Claim(ctx context.Context, pid, by string) ([]Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[pid]
	if !ok {
		return nil, notFound(pid)
	}
	if _, err := m.fire(ctx, pid, p, lifecycle.Wake, by); err != nil {
		if errors.Is(err, lifecycle.ErrForbidden) {
			p.queued = false
		}
		return nil, fmt.Errorf("inbox: claim %s: %w", pid, err)
	}
	p.queued = false
	msgs := p.pending
	p.pending = nil
	return msgs, nil
}

// Fire fires ev on process pid, by by, then applies the wake rule to what
// its inbox holds (AfterChange): ev is an event a turn ends with
// (await_user, continue, finish, fail) or an operator's (pause, resume,
// finish, retry, fail). Claim fires wake and the wake rule user_input:
// Fire refuses them (lifecycle.ErrInvalid). An event the lifecycle forbids
// returns its error (lifecycle.ErrForbidden).
func (m *Memory) Fire(ctx context.Context, pid string, ev lifecycle.Event, by string) (lifecycle.Transition, error) {
	if ev == lifecycle.Wake || ev == lifecycle.UserInput {
		return lifecycle.Transition{}, fmt.Errorf("inbox: fire %s on %s: %w: Claim fires wake, the wake rule user_input",
			ev, pid, lifecycle.ErrInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[pid]
	if !ok {
		return lifecycle.Transition{}, notFound(pid)
	}
	tr, err := m.fire(ctx, pid, p, ev, by)
	if err == nil {
		if ev == lifecycle.AwaitUser || ev == lifecycle.Continue { // a turn that left no call waiting
			p.waiting, p.calls = WaitingUser, nil
		}
		err = m.judge(ctx, pid, p)
	}
	if err != nil {
		return lifecycle.Transition{}, fmt.Errorf("inbox: fire %s on %s: %w", ev, pid, err)
	}
	return tr, nil
}

// AwaitApproval ends a turn of process pid as a turn whose tool calls wait
// for a person's approval does: await_user (by by), the process waiting
// for the decisions on calls, the ids of the calls the turn saw no
// decision for, then the wake rule. A decision for one of them is taken
// once (Post), one that came during the turn included, from a user only
// for a call a user may decide (ErrOperatorOnly); any other is refused
// with ErrNotPending.
func (m *Memory) AwaitApproval(ctx context.Context, pid, by string, calls []conversation.PendingCall) (lifecycle.Transition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[pid]
	if !ok {
		return lifecycle.Transition{}, notFound(pid)
	}
	tr, err := m.fire(ctx, pid, p, lifecycle.AwaitUser, by)
	if err == nil {
		waiting := make(map[string]string, len(calls))
		for _, c := range calls {
			waiting[c.CallID] = c.By
			if by, ok := p.calls[c.CallID]; ok && by == "" {
				waiting[c.CallID] = "" // a decision that came during the turn stands
			}
		}
		p.waiting, p.calls = WaitingApproval, waiting
		err = m.judge(ctx, pid, p)
	}
	if err != nil {
		return lifecycle.Transition{}, fmt.Errorf("inbox: await approval on %s: %w", pid, err)
	}
	return tr, nil
}

// judge applies the wake rule to the inbox of p after a change of state.
func (m *Memory) judge(ctx context.Context, pid string, p *memProcess) error {
	kinds := make([]conversation.Kind, len(p.pending))
	for i, msg := range p.pending {
		kinds[i] = msg.Kind
	}
	e := AfterChange(p.status.State, p.waiting, kinds)
	var by string
	if i := slices.IndexFunc(kinds, func(k conversation.Kind) bool { return Unblocks(k, p.waiting) }); e.Unblock && i >= 0 {
		by = p.pending[i].Sender()
	}
	return m.apply(ctx, pid, p, e, by)
}

// apply carries out what the wake rule decided for p: Unblock fires
// user_input, by by; Wake sets the queued mark.
func (m *Memory) apply(ctx context.Context, pid string, p *memProcess, e Effect, by string) error {
	if e.Unblock {
		if _, err := m.fire(ctx, pid, p, lifecycle.UserInput, by); err != nil {
			return err
		}
	}
	if e.Wake {
		p.queued = true
	}
	return nil
}

// fire moves p on by ev and tells OnTransition.
func (m *Memory) fire(ctx context.Context, pid string, p *memProcess, ev lifecycle.Event, by string) (lifecycle.Transition, error) {
	tr, st, err := lifecycle.Fire(ctx, p.status, ev, by, m.cfg.Clock())
	if err != nil {
		return lifecycle.Transition{}, err
	}
	p.status = st
	if m.cfg.OnTransition != nil {
		m.cfg.OnTransition(pid, tr)
	}
	return tr, nil
}

func notFound(pid string) error {
	return fmt.Errorf("%w: process %q", ErrNotFound, pid)
}
