package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
)

// Record is a process's record: what it is, where it stands in its
// lifecycle and who it belongs to.
type Record struct {
	ID, Recipe, Engine string
	Status             lifecycle.Status
	// Version counts the record's lifecycle changes; Transition uses it to
	// detect concurrent changes.
	Version int64
	// Parent is the process that spawned this one (a worker's chat), or "".
	Parent string
	Depth  int
	Owner  string
	// CreatedAt and UpdatedAt have millisecond precision.
	CreatedAt, UpdatedAt time.Time
	// Queued says the process is on the wake queue.
	Queued   bool
	Metadata map[string]string
	// Inbox counts the messages waiting in the inbox. Get and List read
	// it; the records of the other calls leave it 0.
	Inbox int
	// Tokens are what the process's model calls have used, as their
	// providers reported it, counted by each turn's commit.
	Tokens Tokens
	// Trimmed counts the events removed from the start of the log by the
	// commits of turns of a recipe that keeps fewer (Claim.KeepEvents).
	Trimmed int64
	// Waiting is what the process waits for when BLOCKED: the decisions on
	// Approvals, the tool calls that wait for a person's approval, when it
	// is inbox.WaitingApproval.
	Waiting   inbox.Waiting
	Approvals []conversation.PendingCall
	// Steering is what a user's message does while a turn of the process
	// runs, set at its creation from its recipe (never ""; the record
	// holds no field for inbox.SteeringQueue, the default).
	Steering inbox.Steering
}

// Tokens counts the tokens of model calls.
type Tokens struct {
	Input, Output int64
	// Day is the last UTC day (its start) whose calls used some, and
	// OfDay how many (input and output) they used.
	Day   time.Time
	OfDay int64
}

// On returns the tokens used on the UTC day of at.
func (t Tokens) On(at time.Time) int64 {
	if t.Day.IsZero() || !t.Day.Equal(dayOf(at)) {
		return 0
	}
	return t.OfDay
}

const msPerDay = 24 * 60 * 60 * 1000

// dayOf returns the start of t's UTC day.
func dayOf(t time.Time) time.Time {
	return time.UnixMilli(t.UnixMilli() / msPerDay * msPerDay).UTC()
}

// Get returns the record of process pid, or ErrNotFound.
func (s *Store) Get(ctx context.Context, pid string) (Record, error) {
	if !validID(pid) {
		return Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	pipe := s.rdb.Pipeline()
	fields := pipe.HGetAll(ctx, s.keys.proc(pid))
	inbox := pipe.XLen(ctx, s.keys.inbox(pid))
	if _, err := pipe.Exec(ctx); err != nil {
		return Record{}, fmt.Errorf("store: get %s: %w", pid, err)
	}
	h := fields.Val()
	if len(h) == 0 {
		return Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	r, err := parseRecord(pid, h)
	r.Inbox = int(inbox.Val())
	return r, err
}

// parseRecord builds a Record from the fields of B proc:<pid> (doc.go).
func parseRecord(pid string, h map[string]string) (Record, error) {
	if len(h) == 0 {
		return Record{}, fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	r := Record{ID: pid, Recipe: h["recipe"], Engine: h["engine"], Parent: h["parent"], Owner: h["owner"],
		Steering: inbox.Steering(h["steering"])}
	if r.Steering == "" {
		r.Steering = inbox.SteeringQueue
	}
	depth, err := number(pid, h, "depth")
	if err != nil {
		return Record{}, err
	}
	created, err := number(pid, h, "created_at")
	if err != nil {
		return Record{}, err
	}
	r.Depth, r.CreatedAt = int(depth), time.UnixMilli(created)
	if err := r.setStatus(h); err != nil {
		return Record{}, err
	}
	if m := h["metadata"]; m != "" {
		if err := json.Unmarshal([]byte(m), &r.Metadata); err != nil {
			return Record{}, fmt.Errorf("store: process %s: metadata: %w", pid, err)
		}
	}
	return r, nil
}

// setStatus sets what a turn can change of r (state, paused_from, queued,
// version, updated_at, tokens, trimmed, waiting_for, approvals) from the record fields h, which Commit's script
// returns alone, and Claim's when the caller has the record: the rest is
// set at creation and never changes.
func (r *Record) setStatus(h map[string]string) error {
	version, err := number(r.ID, h, "version")
	if err != nil {
		return err
	}
	updated, err := number(r.ID, h, "updated_at")
	if err != nil {
		return err
	}
	st := lifecycle.Status{State: lifecycle.State(h["state"]), PausedFrom: lifecycle.State(h["paused_from"])}
	if err := st.Validate(); err != nil {
		return fmt.Errorf("store: process %s: %w", r.ID, err)
	}
	r.Status, r.Queued, r.Version, r.UpdatedAt = st, h["queued"] == "1", version, time.UnixMilli(updated)
	r.Waiting, r.Approvals = inbox.Waiting(h["waiting_for"]), nil
	if a := h["approvals"]; a != "" {
		if err := json.Unmarshal([]byte(a), &r.Approvals); err != nil {
			return fmt.Errorf("store: process %s: approvals: %w", r.ID, err)
		}
	}
	// Tokens (none before the first turn that reported some) and trimmed
	// events (none before the first trim) may be missing.
	r.Tokens, r.Trimmed = Tokens{}, 0
	for _, f := range [...]struct {
		name string
		n    *int64
	}{{"tokens_in", &r.Tokens.Input}, {"tokens_out", &r.Tokens.Output}, {"trimmed", &r.Trimmed}} {
		if h[f.name] == "" {
			continue
		}
		if *f.n, err = number(r.ID, h, f.name); err != nil {
			return err
		}
	}
	if d := h["tokens_day"]; d != "" {
		day, used, ok := strings.Cut(d, ":")
		n, err1 := strconv.ParseInt(day, 10, 64)
		m, err2 := strconv.ParseInt(used, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("store: process %s: tokens_day %q is not <day>:<tokens>", r.ID, d)
		}
		r.Tokens.Day, r.Tokens.OfDay = time.UnixMilli(n*msPerDay).UTC(), m
	}
	return nil
}

// number returns field of the record fields h of process pid as a number.
func number(pid string, h map[string]string, field string) (int64, error) {
	v, err := strconv.ParseInt(h[field], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("store: process %s: field %s: %q is not a number", pid, field, h[field])
	}
	return v, nil
}
