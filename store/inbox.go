package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
)

// Message is an inbox message (inbox.Message).
type Message = inbox.Message

var _ inbox.Inbox = (*Store)(nil)

// stampedMessage returns m with At set to now when zero.
func stampedMessage(m Message, now time.Time) Message {
	if m.At.IsZero() {
		m.At = now
	}
	return m
}

// Post adds m to the inbox of process pid in one atomic step and applies
// the wake rule (package inbox): a READY process is put on the wake queue; a
// BLOCKED one is unblocked (user_input) and queued by a user or operator
// message; a PAUSED one keeps the message for when it is resumed; a
// RUNNING one gets it at the end of its turn, or, as its steering says
// (NewProcess.Steering), during it: a user's message is then refused with
// an *inbox.BusyError, or interrupts the turn (a message on the channel of
// the node that runs it, "<pid> interrupt").
//
// A repeated idempotency key returns the first message's id and dup=true,
// adding nothing. A DONE or FAILED process returns ErrClosed and stores
// nothing; an unknown one ErrNotFound; a full inbox ErrInboxFull (see
// Config.InboxLimit); an approval for a call that waits for no decision an
// *inbox.NotPendingError.
func (s *Store) Post(ctx context.Context, pid string, m Message) (id string, dup bool, err error) {
	if !validID(pid) {
		return "", false, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	if err := m.Validate(); err != nil {
		return "", false, fmt.Errorf("store: post to %s: %w", pid, err)
	}
	now := s.now()
	m = stampedMessage(m, now)
	args := s.processArgs(pid, now)
	d, _ := m.Decision() // the call an approval decides
	args = append(args, string(m.Kind), m.From, m.Content, m.At.UnixMilli(), m.IdempotencyKey, idempotencyTTL.Milliseconds(), s.inboxLimit(),
		d.CallID, m.Decider())
	if m.TraceParent != "" { // only then: an argument costs Redis even when empty
		args = append(args, m.TraceParent)
	}
	status, res, err := s.run(ctx, s.scripts.post, s.keys.processKeys(pid)[:5], args...)
	if err != nil {
		return "", false, fmt.Errorf("store: post to %s: %w", pid, err)
	}
	switch status {
	case "NOTPENDING", "DECIDED":
		return "", false, &inbox.NotPendingError{PID: pid, CallID: d.CallID, Decided: status == "DECIDED"}
	case "OPERATORONLY":
		return "", false, &inbox.OperatorOnlyError{PID: pid, CallID: d.CallID}
	case "BUSY":
		return "", false, &inbox.BusyError{PID: pid}
	}
	return s.postResult(pid, status, res)
}

// postResult interprets the {status, id} reply of the post semantics.
func (s *Store) postResult(pid, status string, res []any) (string, bool, error) {
	var id string
	if len(res) > 0 {
		id = str(res[0])
	}
	switch status {
	case "OK":
		return id, false, nil
	case "DUP":
		return id, true, nil
	case "NOTFOUND":
		return "", false, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	case "CLOSED":
		return "", false, fmt.Errorf("%w: process %q takes no more messages", ErrClosed, pid)
	case "FULL":
		return "", false, &InboxFullError{PID: pid, Limit: s.cfg.InboxLimit}
	}
	return "", false, fmt.Errorf("store: post to %s: unexpected reply %q", pid, status)
}

// Inbox returns the pending messages of process pid, oldest first.
func (s *Store) Inbox(ctx context.Context, pid string) ([]Message, error) {
	if !validID(pid) {
		return nil, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	var exists *redis.IntCmd
	var entries *redis.XMessageSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, s.keys.proc(pid))
		entries = p.XRange(ctx, s.keys.inbox(pid), "-", "+")
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: inbox of %s: %w", pid, err)
	}
	if exists.Val() == 0 {
		return nil, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	msgs := make([]Message, 0, len(entries.Val()))
	for _, e := range entries.Val() {
		m := Message{ID: e.ID}
		m.Kind = conversation.Kind(field(e.Values, "kind"))
		m.From = field(e.Values, "from")
		m.Content = field(e.Values, "content")
		m.TraceParent = field(e.Values, "traceparent")
		if ms, err := strconv.ParseInt(field(e.Values, "at"), 10, 64); err == nil {
			m.At = time.UnixMilli(ms)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

func field(values map[string]any, name string) string {
	s, _ := values[name].(string)
	return s
}
