package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
)

// Notify is a message a finished turn posts to another process: a worker's
// result to its parent.
type Notify struct {
	PID     string
	Message Message
}

// ReportTo returns the notification that carries report to parent
// (inbox.Report).
func ReportTo(parent string, report conversation.ProcessEvent) *Notify {
	return &Notify{PID: parent, Message: inbox.Report(report)}
}

// notifyArgs returns the keys and arguments with which a script of process
// pid posts n (commit.lua, delete.lua): the first 5 keys of n.PID, then its
// id, base of its partition, the message's kind (process_event when empty), sender (pid
// when empty), content and time, the idempotency key "child:<pid>" and its
// ttl, and its trace parent when it has one.
func (s *Store) notifyArgs(pid string, n *Notify, now time.Time) ([]string, []any, error) {
	if !validID(n.PID) {
		return nil, nil, fmt.Errorf("notify: %q is not a process id", n.PID)
	}
	m := stampedMessage(n.Message, now)
	if m.Kind == "" {
		m.Kind = conversation.KindProcessEvent
	}
	if m.From == "" {
		m.From = pid
	}
	if err := m.Validate(); err != nil {
		return nil, nil, fmt.Errorf("notify: %w", err)
	}
	args := []any{n.PID, s.keys.of(n.PID), string(m.Kind), m.From, m.Content, m.At.UnixMilli(),
		"child:" + pid, idempotencyTTL.Milliseconds()}
	if m.TraceParent != "" {
		args = append(args, m.TraceParent)
	}
	return s.keys.processKeys(n.PID)[:5], args, nil
}

// Commit ends the claim's turn in one fenced, atomic step:
//
//   - events are appended;
//   - ev (await_user, continue, finish or fail), fired by by, moves a
//     RUNNING process on (state_change event, version, state index). If an
//     operator paused the process during the turn (PAUSED from RUNNING) it
//     stays PAUSED and resume will land where ev leads (await_user,
//     continue); finish and fail still end it (DONE, FAILED: there is
//     nothing left to hold). If the process left RUNNING any other way
//     meanwhile (closed, failed, resumed), the events are kept and its state
//     is left as it is;
//   - the tokens the turn's model calls used (its model_usage events,
//     checkpointed ones included) are added to the record's Tokens;
//   - the lease is deleted and the claim's wake acknowledged (TrimWakes
//     deletes it later);
//   - the wake rule judges what is left in the inbox, so a message that
//     arrived during the turn is never stranded;
//   - the log is trimmed to the claim's KeepEvents, if set;
//   - approvals, when given, are the tool calls the process now waits for
//     a person's decision on (ev is then await_user): the record says so
//     (Waiting, Approvals) and an approval for one of them is taken once
//     (Post); without them it waits for none. A decision that came during
//     the turn for a call that still waits stands;
//   - notify, when not nil, is posted to notify.PID with Post's semantics
//     (the wake rule for that process) under the idempotency key
//     "child:<pid>", so it is posted once; a parent that is gone, DONE or
//     FAILED is skipped silently. Its kind defaults to process_event, its
//     sender to the committing process's id.
//
// A claim that lost its lease or token gets ErrFenced and writes nothing.
// It returns the record after the commit (the claim's, with what the turn
// changed), and adds what it wrote to the claim's Appended (see
// Claim.Gapless).
func (s *Store) Commit(ctx context.Context, c *Claim, events []conversation.Event, ev lifecycle.Event, by string, notify *Notify,
	approvals ...conversation.PendingCall) (Record, error) {
	pid := c.Record.ID
	switch ev {
	case lifecycle.AwaitUser, lifecycle.Continue, lifecycle.Finish, lifecycle.Fail:
	default:
		return Record{}, fmt.Errorf("store: commit %s: %w: event %q does not end a turn; want await_user, continue, finish or fail",
			pid, lifecycle.ErrInvalid, ev)
	}
	waiting := ""
	if len(approvals) > 0 {
		if ev != lifecycle.AwaitUser {
			return Record{}, fmt.Errorf("store: commit %s: %w: calls wait for approval, so the turn ends with await_user, not %s",
				pid, lifecycle.ErrInvalid, ev)
		}
		b, err := json.Marshal(approvals)
		if err != nil {
			return Record{}, fmt.Errorf("store: commit %s: approvals: %w", pid, err)
		}
		waiting = string(b)
	}
	if by == "" {
		return Record{}, fmt.Errorf("store: commit %s: by is empty: name who fires %s, e.g. \"model\"", pid, ev)
	}
	now := s.now()
	evs, err := encodeEvents(events, now)
	if err != nil {
		return Record{}, fmt.Errorf("store: commit %s: %w", pid, err)
	}
	args := s.processArgs(pid, now)
	keys := s.keys.processKeys(pid)[:4]
	used := c.tokens.plus(events)
	args = append(args, c.leaseValue(), strconv.FormatInt(c.Token, 10), string(ev), by, c.Wake.Stream, c.Wake.EntryID,
		c.knownLen(), used.Input, used.Output, max(c.KeepEvents, 0), len(evs))
	args = append(args, evs...)
	args = append(args, waiting)
	if notify != nil {
		nkeys, nargs, err := s.notifyArgs(pid, notify, now)
		if err != nil {
			return Record{}, fmt.Errorf("store: commit %s: %w", pid, err)
		}
		keys, args = append(keys, nkeys...), append(args, nargs...)
	}
	status, res, err := s.run(ctx, s.scripts.commit, keys, args...)
	switch {
	case err != nil:
		return Record{}, fmt.Errorf("store: commit %s: %w", pid, err)
	case status == "FENCED":
		return Record{}, fmt.Errorf("%w: process %s: claim %s", ErrFenced, pid, c.leaseValue())
	case status != "OK" || len(res) < 4:
		return Record{}, fmt.Errorf("store: commit %s: unexpected reply %q", pid, status)
	}
	gapless := str(res[1]) == "1"
	c.appended(gapless, events, strs(res[2]), now)
	c.tokens = used
	if c.Gapless {
		own, err := s.made(res[3], now)
		if err != nil {
			return Record{}, fmt.Errorf("store: commit %s: %w", pid, err)
		}
		c.Appended = append(c.Appended, own...)
		c.logLen += len(own)
	}
	rec := c.Record
	if err := rec.setStatus(hash(res[0])); err != nil {
		return Record{}, err
	}
	return rec, nil
}
