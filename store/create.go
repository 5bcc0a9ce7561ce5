package store

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
)

// NewProcess describes a process to create.
type NewProcess struct {
	// ID is optional: a random URL-safe id ("p_" and 16 base32 characters)
	// is generated when it is empty, in the partition of Parent when there
	// is one (see WorkerID). Given ids are 1 to 128 characters of
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
	switch {
	case p.ID == "" && p.Parent != "":
		p.ID = s.keys.newIDIn(s.keys.partition(p.Parent))
	case p.ID == "":
		p.ID = newID()
	case p.Parent != "" && s.keys.partition(p.ID) != s.keys.partition(p.Parent):
		return Record{}, fmt.Errorf("store: create %s: %w: a worker's id must fall in its parent's partition, so that what "+
			"passes between them stays in one slot: leave ID empty, or take it from WorkerID(%q, ...)", p.ID, ErrWorkerPartition, p.Parent)
	}
	var meta string
	if len(p.Metadata) > 0 {
		b, err := json.Marshal(p.Metadata)
		if err != nil {
			return Record{}, fmt.Errorf("store: create %s: metadata: %w", p.ID, err)
		}
		meta = string(b)
	}
	limit, err := s.ownerRoom(ctx, p.ID, p.Owner)
	if err != nil {
		return Record{}, fmt.Errorf("store: create %s: %w", p.ID, err)
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
		limit, steering)
	if in.TraceParent != "" {
		args = append(args, in.TraceParent)
	}
	keys := s.keys.processKeys(p.ID)
	if p.Parent != "" {
		keys = append(keys, s.keys.workers(p.Parent))
	}
	status, res, err := s.run(ctx, s.scripts.create, keys, args...)
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

// WorkerID returns the id of parent's worker named by key (a valid id
// derived from an idempotency key, say): key itself when it falls in
// parent's partition, else the first of a series of ids drawn from it
// ("p_" and 16 base32 characters of a hash of key and a counter) that
// does. The same key gives the same id, in parent's partition, so that
// what passes between a worker and its parent (the workers index, the
// worker's result) stays in one slot.
func (s *Store) WorkerID(parent, key string) string {
	want := s.keys.partition(parent)
	id := key
	for i := 1; s.keys.partition(id) != want; i++ {
		sum := sha256.Sum256([]byte(key + "\x00" + strconv.Itoa(i)))
		id = "p_" + strings.ToLower(base32.StdEncoding.EncodeToString(sum[:10]))
	}
	return id
}

// ownerRoom returns the most processes owner may have in the partition of
// process pid, for the create script to check with the process's own
// partition ("0": no limit): the limit less those owner has in the other
// partitions, counted in one round trip before the script runs. Creates of
// one owner racing in different partitions can then pass the limit by as
// many as race, never more.
func (s *Store) ownerRoom(ctx context.Context, pid, owner string) (int, error) {
	if owner == "" || s.cfg.OwnerLimit <= 0 {
		return 0, nil
	}
	own := s.keys.partition(pid)
	counts := make([]*redis.IntCmd, 0, len(s.keys.bases)-1)
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for n := range s.keys.bases {
			if n != own {
				counts = append(counts, p.ZCard(ctx, s.keys.owner(n, owner)))
			}
		}
		return nil
	}); err != nil {
		return 0, fmt.Errorf("counting %s's processes: %w", owner, err)
	}
	room := s.cfg.OwnerLimit
	for _, c := range counts {
		room -= int(c.Val())
	}
	if room <= 0 {
		return -1, nil // none left (0 would mean no limit)
	}
	return room, nil
}
