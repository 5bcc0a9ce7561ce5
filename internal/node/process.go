package node

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// NewProcess describes a process to create.
type NewProcess struct {
	Recipe string
	// Input, when set, is the first user message: the process starts READY
	// and wakes. Without it the process waits BLOCKED for the user.
	Input string
	// Owner is the user the process belongs to (and the sender of Input).
	Owner    string
	Metadata map[string]string
	// Parent and Depth are set for workers.
	Parent string
	Depth  int
	// IdempotencyKey, when set, makes a repeated Create with the same key
	// and owner return the process the first one made, as it is now,
	// instead of making another: the process's id is derived from them.
	// A key used for a process of another recipe or parent is refused
	// (ErrIdempotencyKeyReused).
	IdempotencyKey string
	// kind of the first message; user unless a parent hands a task over.
	inputKind conversation.Kind
	inputFrom string
}

// Create creates a process from a recipe, with the recipe's scheduled
// wakeups armed and its steering of a user's messages kept on the record
// (the post script judges it with the state). Its input carries the trace
// context of ctx, if any: the span of its first turn links to it.
func (n *Node) Create(ctx context.Context, p NewProcess) (store.Record, error) {
	r, err := n.recipe(p.Recipe)
	if err != nil {
		return store.Record{}, fmt.Errorf("brain: %w", err)
	}
	np := store.NewProcess{
		Recipe: r.Name, Engine: string(r.EngineKind()), Parent: p.Parent, Depth: p.Depth,
		Owner: p.Owner, Metadata: p.Metadata, Steering: r.Steering.User(),
	}
	if p.IdempotencyKey != "" {
		np.ID = keyedID(p.Owner, p.IdempotencyKey)
		if p.Parent != "" {
			np.ID = n.store.WorkerID(p.Parent, np.ID)
		}
	}
	if p.Input != "" {
		kind, from := p.inputKind, p.inputFrom
		if kind == "" {
			kind, from = conversation.KindUser, userFrom(p.Owner)
		}
		np.Input = &store.Message{Kind: kind, From: from, Content: p.Input, At: n.cfg.Clock(), TraceParent: traceParent(ctx)}
	}
	rec, err := n.store.Create(ctx, np)
	if errors.Is(err, store.ErrExists) && p.IdempotencyKey != "" {
		return n.created(ctx, np)
	}
	if err != nil {
		return store.Record{}, fmt.Errorf("brain: %w", err)
	}
	if err := n.armSchedules(ctx, rec.ID, r); err != nil {
		return rec, fmt.Errorf("brain: process %s created, but its schedules: %w", rec.ID, err)
	}
	return rec, nil
}

// ErrIdempotencyKeyReused: Create was given the idempotency key of a
// process of another recipe or parent.
var ErrIdempotencyKeyReused = errors.New("brain: the idempotency key was used for another process")

// created returns the process a Create with np's idempotency key made
// before, when it is np's.
func (n *Node) created(ctx context.Context, np store.NewProcess) (store.Record, error) {
	rec, err := n.store.Get(ctx, np.ID)
	if err != nil {
		return store.Record{}, fmt.Errorf("brain: %w", err)
	}
	if rec.Recipe != np.Recipe || rec.Parent != np.Parent || rec.Owner != np.Owner {
		return store.Record{}, fmt.Errorf("%w: %s, of recipe %s", ErrIdempotencyKeyReused, rec.ID, rec.Recipe)
	}
	return rec, nil
}

// keyedID is the id of the process that owner's create with idempotency
// key makes: the same for the same two, and as a random id looks.
func keyedID(owner, key string) string {
	sum := sha256.Sum256([]byte(owner + "\x00" + key))
	return "p_" + strings.ToLower(base32.StdEncoding.EncodeToString(sum[:10]))
}

func userFrom(owner string) string {
	if owner == "" {
		return "user"
	}
	return "user:" + owner
}

// Send posts a user message to a process's inbox; it wakes the process when
// its state allows. While a turn runs, the process's steering decides: the
// message waits for the next turn, steers this one, interrupts its model
// call, or is refused with an *inbox.BusyError (inbox.ErrBusy). A repeated
// idempotency key returns the first message's id and adds nothing. The
// message carries the trace context of ctx, if any (so do Steer's and
// Decide's): the span of the turn that drains it links to it.
func (n *Node) Send(ctx context.Context, pid, from, content, idempotencyKey string) (string, error) {
	return n.post(ctx, pid, conversation.KindUser, from, content, idempotencyKey)
}

// Steer posts an operator message to a process's inbox; idempotencyKey
// works as Send's.
func (n *Node) Steer(ctx context.Context, pid, from, content, idempotencyKey string) (string, error) {
	return n.post(ctx, pid, conversation.KindOperator, from, content, idempotencyKey)
}

func (n *Node) post(ctx context.Context, pid string, kind conversation.Kind, from, content, key string) (string, error) {
	id, _, err := n.store.Post(ctx, pid, store.Message{Kind: kind, From: from, Content: content, At: n.cfg.Clock(), IdempotencyKey: key,
		TraceParent: traceParent(ctx)})
	if errors.Is(err, store.ErrInboxFull) {
		n.cfg.Metrics.inboxFull(kind)
	}
	return id, err
}

// Decide posts a person's decision on a tool call of process pid that waits
// for approval; it wakes the process. A call that waits for no decision
// (unknown, or decided already) is refused with inbox.ErrNotPending, and
// nothing is stored; idempotencyKey works as Send's. Who may decide is the
// caller's to check (Record.Approvals says who the recipe lets decide).
func (n *Node) Decide(ctx context.Context, pid, from string, d conversation.ApprovalDecision, idempotencyKey string) (string, error) {
	m := inbox.Approval(d, from)
	m.At, m.IdempotencyKey, m.TraceParent = n.cfg.Clock(), idempotencyKey, traceParent(ctx)
	id, _, err := n.store.Post(ctx, pid, m)
	return id, err
}

// Approvals returns the processes whose tool calls wait for a person's
// approval (their records' Approvals).
func (n *Node) Approvals(ctx context.Context) ([]store.Record, error) {
	return n.store.Approvals(ctx)
}

// Transition fires an operator's lifecycle event on a process: pause,
// resume, finish (stop), retry.
func (n *Node) Transition(ctx context.Context, pid string, ev lifecycle.Event, by string) (store.Record, error) {
	_, rec, err := n.store.Transition(ctx, pid, ev, by)
	return rec, err
}

// Delete removes a process and everything it has: record, inbox, log,
// timers, index entries, and its workers (store.Delete), whose ids it
// returns. It refuses while a turn of any of them runs (store.ErrRunning).
// A log a node keeps of it goes when the node needs the room.
func (n *Node) Delete(ctx context.Context, pid string) (store.Record, []string, error) {
	return n.store.Delete(ctx, pid)
}

// Get returns a process's record.
func (n *Node) Get(ctx context.Context, pid string) (store.Record, error) {
	return n.store.Get(ctx, pid)
}

// Inbox returns the messages waiting in a process's inbox, oldest first:
// those its next turn drains.
func (n *Node) Inbox(ctx context.Context, pid string) ([]store.Message, error) {
	return n.store.Inbox(ctx, pid)
}

// List lists processes, optionally in one state, a page at a time.
func (n *Node) List(ctx context.Context, state lifecycle.State, after string, limit int) ([]store.Record, string, error) {
	return n.store.List(ctx, state, after, limit)
}

// ListOwned lists the processes owner created, optionally in one state, a
// page at a time (a filtered page may be short and still have a next).
func (n *Node) ListOwned(ctx context.Context, owner string, state lifecycle.State, after string, limit int) ([]store.Record, string, error) {
	return n.store.ListOwned(ctx, owner, state, after, limit)
}

// ListWorkers lists the workers process parent started, optionally in one
// state, a page at a time.
func (n *Node) ListWorkers(ctx context.Context, parent string, state lifecycle.State, after string, limit int) ([]store.Record, string, error) {
	return n.store.ListWorkers(ctx, parent, state, after, limit)
}

// Log returns a page of a process's conversation log after event id after.
func (n *Node) Log(ctx context.Context, pid, after string, limit int) ([]conversation.Event, error) {
	return n.store.Log(ctx, pid, after, limit)
}

// LogBefore returns, oldest first, up to limit events of a process's log
// right before event id before (its newest when before is empty), and
// whether there may be more before them.
func (n *Node) LogBefore(ctx context.Context, pid, before string, limit int) ([]conversation.Event, bool, error) {
	return n.store.LogBefore(ctx, pid, before, limit)
}

// Follow waits up to block for events after event id after.
func (n *Node) Follow(ctx context.Context, pid, after string, block time.Duration) ([]conversation.Event, error) {
	return n.store.Follow(ctx, pid, after, block)
}

// Ping reports whether Redis answers.
func (n *Node) Ping(ctx context.Context) error {
	return n.cfg.Redis.Ping(ctx).Err()
}
