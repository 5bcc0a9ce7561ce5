package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/inbox"
)

// Errors of the store. Returned errors wrap them with the process and the
// operation; match them with errors.Is.
var (
	// ErrNotFound: no process (or timer) by that id. It matches
	// inbox.ErrNotFound as well, as the errors of an inbox.Inbox must.
	ErrNotFound error = &sentinel{"store: not found", inbox.ErrNotFound}
	// ErrExists: Create was given the id of an existing process.
	ErrExists = errors.New("store: process exists")
	// ErrClosed is inbox.ErrClosed: the process is DONE or FAILED and takes
	// no messages, nor timers.
	ErrClosed = inbox.ErrClosed
	// ErrFenced: the claim lost its lease, or a newer claim took the
	// process; the turn must be dropped, nothing was written.
	ErrFenced = errors.New("store: fenced")
	// ErrConflict: the record changed under a transition more often than
	// Transition retries.
	ErrConflict = errors.New("store: version conflict")
	// ErrRunning: a turn holds the process's lease; Delete waits for no
	// turn and must be tried again when it has ended.
	ErrRunning = errors.New("store: process running a turn")
	// ErrInboxFull is inbox.ErrFull: the process's inbox holds
	// Config.InboxLimit messages already; nothing was stored. Post again
	// once the process has read them. The error is an *InboxFullError.
	ErrInboxFull = inbox.ErrFull
	// ErrOwnerLimit: a create refused because its owner has
	// Config.OwnerLimit processes already. The error is an
	// *OwnerLimitError.
	ErrOwnerLimit = errors.New("store: owner's process limit reached")
	// ErrNotReplicated: Redis made a write, but fewer replicas than
	// Config.WaitReplicas acknowledged it in Config.WaitTimeout, so a
	// failover now could lose it. Unavailable reports it: retry as after
	// a dropped connection (a post with the same idempotency key).
	ErrNotReplicated = errors.New("store: the write is not on enough replicas")
	// ErrWorkerPartition: Create was given a worker's id in another
	// partition than its parent's (see WorkerID).
	ErrWorkerPartition = errors.New("store: worker outside its parent's partition")
	// ErrNothingToDo: a wake that starts no turn. The store has already
	// settled the wake: the caller must not acknowledge it.
	ErrNothingToDo = errors.New("store: nothing to do")
)

// idempotencyTTL is how long an idempotency key is remembered after its
// last use.
const idempotencyTTL = 24 * time.Hour

// Config configures a Store. Zero values take the defaults named below.
type Config struct {
	// Partitions is the number of partitions of the deployment's keys
	// (default DefaultPartitions; a power of two up to MaxPartitions): each
	// process belongs to one, and each has its own wake stream per engine.
	// It is set once: every node sharing a Redis must use the same number
	// (CheckLayout refuses another).
	Partitions int
	// LeaseTTL is how long a claim owns a process without renewing its
	// lease (default 10s; at least 1ms).
	LeaseTTL time.Duration
	// Clock stamps records, messages and events (default time.Now). Lease
	// expiry is Redis's own time.
	Clock func() time.Time
	// InboxLimit is the most messages a process's inbox holds (default
	// DefaultInboxLimit; -1: no limit). A post beyond it is refused with
	// ErrInboxFull, except a worker's result or a system notice, which are
	// never refused, and a user or operator message to a BLOCKED process,
	// which wakes it (its turn drains the inbox whole). A timer that fires
	// into a full inbox drops its tick.
	InboxLimit int
	// WaitReplicas, when more than 0, makes every write of the store
	// wait (Redis WAIT) until that many replicas have it: a write answered
	// without an error survives a failover to any of them. A write that
	// does not reach them within WaitTimeout (default 1s) fails with
	// ErrNotReplicated, though the master made it.
	WaitReplicas int
	WaitTimeout  time.Duration
	// OwnerLimit, when more than 0, is the most processes one owner may
	// have, workers and finished ones included (until they are deleted):
	// a create beyond it is refused with an *OwnerLimitError. Processes
	// without an owner are not counted.
	OwnerLimit int
}

// OwnerLimitError is a create refused because Owner has Limit processes
// already (Config.OwnerLimit). It matches ErrOwnerLimit.
type OwnerLimitError struct {
	Owner string
	Limit int
}

func (e *OwnerLimitError) Error() string {
	return fmt.Sprintf("store: %s has the most processes an owner may have (%d)", e.Owner, e.Limit)
}

func (e *OwnerLimitError) Is(target error) bool { return target == ErrOwnerLimit }

// InboxFullError is inbox.FullError: a message refused because the inbox of
// process PID holds Limit messages already. It matches ErrInboxFull.
type InboxFullError = inbox.FullError

// A sentinel is an error of the store's that matches a more general one of
// another package as well (errors.Is): Unwrap returns that one.
type sentinel struct {
	msg  string
	also error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.also }

// DefaultInboxLimit is the inbox limit when Config.InboxLimit is zero:
// far more than a process reads in one turn, few enough that a runaway
// sender cannot fill Redis or make one turn drain for long.
const DefaultInboxLimit = 1000

func (c *Config) setDefaults() {
	if c.Partitions == 0 {
		c.Partitions = DefaultPartitions
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 10 * time.Second
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.InboxLimit == 0 {
		c.InboxLimit = DefaultInboxLimit
	}
	if c.WaitTimeout == 0 {
		c.WaitTimeout = time.Second
	}
}

// CheckPartitions says what is wrong with n as a deployment's number of
// partitions: it must be a power of two from 1 to MaxPartitions.
func CheckPartitions(n int) error {
	if n < 1 || n > MaxPartitions || n&(n-1) != 0 {
		return fmt.Errorf("must be a power of two from 1 to %d (got %d)", MaxPartitions, n)
	}
	return nil
}

func (c *Config) validate() error {
	var errs []error
	if err := CheckPartitions(c.Partitions); err != nil {
		errs = append(errs, fmt.Errorf("Partitions: %w", err))
	}
	if c.WaitReplicas < 0 {
		errs = append(errs, fmt.Errorf("WaitReplicas: must not be negative (got %d); 0 waits for none", c.WaitReplicas))
	}
	if c.WaitTimeout < time.Millisecond {
		errs = append(errs, fmt.Errorf("WaitTimeout: must be at least 1ms (got %s)", c.WaitTimeout))
	}
	if c.OwnerLimit < 0 {
		errs = append(errs, fmt.Errorf("OwnerLimit: must not be negative (got %d); 0 is no limit", c.OwnerLimit))
	}
	if c.InboxLimit < -1 {
		errs = append(errs, fmt.Errorf("InboxLimit: must be at least 1, or -1 for no limit (got %d)", c.InboxLimit))
	}
	if c.LeaseTTL < time.Millisecond {
		errs = append(errs, fmt.Errorf("LeaseTTL: must be at least 1ms (got %s)", c.LeaseTTL))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: invalid config: %w", err)
	}
	return nil
}

// Store is the Redis persistence of processes: records, inboxes, logs,
// leases, the wake queue and timers. It is safe for concurrent use.
type Store struct {
	rdb   redis.UniversalClient
	batch *batcher // the scripts' calls go through it
	cfg   Config
	keys  layout
	// cluster: rdb is a Redis Cluster's client, which takes a command's
	// keys from one slot only.
	cluster bool
	// poll is where a Cluster's wake streams are looked at next (pollWakes):
	// the stream (cursor), not before when (next, unix ns), and the wait
	// after a round that found nothing (wait, ns).
	poll struct{ cursor, next, wait atomic.Int64 }
	// bell tells pollWakes when a wake stream changed (bell.go).
	bell    *bell
	scripts *scripts
	tpl     templates

	mu     sync.Mutex
	groups map[string]bool // wake streams whose consumer group exists
}

// New returns a Store on rdb. It does not talk to Redis: scripts are
// loaded by their first use.
func New(rdb redis.UniversalClient, cfg Config) (*Store, error) {
	if rdb == nil {
		return nil, errors.New("store: invalid config: Redis client: required")
	}
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tpl, err := newTemplates()
	if err != nil {
		return nil, err
	}
	_, cluster := rdb.(*redis.ClusterClient)
	keys := newLayout(cfg.Partitions)
	return &Store{rdb: rdb, cluster: cluster, bell: newBell(keys), batch: newBatcher(rdb, cfg.WaitReplicas, cfg.WaitTimeout), cfg: cfg, keys: keys, scripts: newScripts(tpl, cluster), tpl: tpl, groups: make(map[string]bool)}, nil
}

func (s *Store) now() time.Time { return s.cfg.Clock() }

// Close releases what the store holds beside its Redis client: the
// connections of its wake bell on a Cluster (bell.go). The client is the
// caller's to close.
func (s *Store) Close() { s.bell.close() }

// run runs a script and returns its reply, which every script makes an
// array whose first element is a status word.
func (s *Store) run(ctx context.Context, sc *script, keys []string, args ...any) (string, []any, error) {
	return s.runThen(ctx, sc, nil, keys, args...)
}

// runThen is run followed by the commands of then (see script.RunThen).
func (s *Store) runThen(ctx context.Context, sc *script, then []redis.Cmder, keys []string, args ...any) (string, []any, error) {
	res, err := sc.RunThen(ctx, s.batch, then, keys, args...).Slice()
	if err != nil {
		return "", nil, err
	}
	if len(res) == 0 {
		return "", nil, errors.New("empty script reply")
	}
	status, _ := res[0].(string)
	return status, res[1:], nil
}

// processArgs are the first four arguments of every script that works on a
// process: pid, the base of its partition's keys, the time in unix ms (for
// records and indexes) and as events carry it (the templates' "at").
func (s *Store) processArgs(pid string, now time.Time) []any {
	return []any{pid, s.keys.of(pid), now.UnixMilli(), now.UTC().Format(time.RFC3339Nano)} // as encodeEvent writes At
}

// inboxLimit is the limit as the scripts take it: 0 for none.
func (s *Store) inboxLimit() int {
	return max(s.cfg.InboxLimit, 0)
}

// str returns the string of a script reply element ("" for nil).
func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return fmt.Sprint(v)
	}
	return ""
}

// strs returns the strings of a flat array reply.
func strs(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, len(arr))
	for i, e := range arr {
		out[i] = str(e)
	}
	return out
}

// hash returns a flat field/value array reply as a map.
func hash(v any) map[string]string {
	flat := strs(v)
	m := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		m[flat[i]] = flat[i+1]
	}
	return m
}
