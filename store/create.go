package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
)

// NewProcess describes a process to create.
type NewProcess struct {
	// ID is optional: a random URL-safe id ("p_" and 16 base32 characters)
	// is generated when it is empty. Given ids are 1 to 128 characters of
	// [A-Za-z0-9_.-].
	ID             string
	Recipe, Engine string
	Parent, Owner  string
	Depth          int
	Metadata       map[string]string
	// Steering is what a user's message does while a turn runs (the
	// recipe's steering.user_messages; "" is inbox.SteeringQueue). The
	// post script judges it with the state, in the same step.
	Steering inbox.Steering
	// Input is an optional first message.
	Input *Message
}

func (p *NewProcess) validate() error {
	var errs []error
	if p.ID != "" && !validID(p.ID) {
		errs = append(errs, fmt.Errorf("ID: %q: want 1 to %d characters of [A-Za-z0-9_.-]", p.ID, maxIDBytes))
	}
	if p.Recipe == "" {
		errs = append(errs, errors.New("Recipe: required"))
	}
	if !validID(p.Engine) {
		errs = append(errs, fmt.Errorf("Engine: %q: want a name of [A-Za-z0-9_.-], e.g. \"chat\"", p.Engine))
	}
	if p.Parent != "" && !validID(p.Parent) {
		errs = append(errs, fmt.Errorf("Parent: %q is not a process id", p.Parent))
	}
	if err := p.Steering.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("Steering: %w", err))
	}
	if p.Depth < 0 {
		errs = append(errs, fmt.Errorf("Depth: must not be negative (got %d)", p.Depth))
	}
	if p.Input != nil {
		if err := p.Input.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("Input: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Create creates a process in one atomic step. Without Input it is BLOCKED
// (waiting for the user); with Input it is READY, the message is in its
// inbox and the process is on the wake queue. An existing id returns
// ErrExists; an owner who has Config.OwnerLimit processes, an
// *OwnerLimitError.
func (s *Store) Create(ctx context.Context, p NewProcess) (Record, error) {
	if err := p.validate(); err != nil {
		return Record{}, fmt.Errorf("store: create: %w", err)
	}
	if p.ID == "" {
		p.ID = newID()
	}
	var meta string
	if len(p.Metadata) > 0 {
		b, err := json.Marshal(p.Metadata)
		if err != nil {
			return Record{}, fmt.Errorf("store: create %s: metadata: %w", p.ID, err)
		}
		meta = string(b)
	}
	now := s.now()
	args := s.processArgs(p.ID, now)
	state := lifecycle.Blocked
	in := Message{}
	hasInput := "0"
	if p.Input != nil {
		state, in, hasInput = lifecycle.Ready, stampedMessage(*p.Input, now), "1"
	}
	var steering string // the default, queue, is no field: it costs the record nothing
	if p.Steering != inbox.SteeringQueue {
		steering = string(p.Steering)
	}
	args = append(args, string(state), p.Recipe, p.Engine, p.Parent, p.Depth, p.Owner, meta,
		hasInput, string(in.Kind), in.From, in.Content, in.At.UnixMilli(), in.IdempotencyKey, idempotencyTTL.Milliseconds(),
		s.cfg.OwnerLimit, steering)
	if in.TraceParent != "" {
		args = append(args, in.TraceParent)
	}
	status, res, err := s.run(ctx, s.scripts.create, processKeys(p.ID), args...)
	switch {
	case err != nil:
		return Record{}, fmt.Errorf("store: create %s: %w", p.ID, err)
	case status == "EXISTS":
		return Record{}, fmt.Errorf("%w: %q", ErrExists, p.ID)
	case status == "LIMIT":
		return Record{}, &OwnerLimitError{Owner: p.Owner, Limit: s.cfg.OwnerLimit}
	case status != "OK" || len(res) < 2:
		return Record{}, fmt.Errorf("store: create %s: unexpected reply %q", p.ID, status)
	}
	return parseRecord(p.ID, hash(res[1]))
}
