package api

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// fake is a Backend in memory, with the errors of the real one: store and
// lifecycle sentinels, recipes.ErrNotFound. Log ids are "<n>-0". Messages
// go to an inbox.Memory, which holds the processes' statuses too and
// applies the wake rule to them as the store does.
type fake struct {
	lib *recipes.Library

	mu sync.Mutex
	// inbox has the status, the queued mark and the messages of every
	// process of procs; it is called with mu held.
	inbox    *inbox.Memory
	procs    map[string]*store.Record
	order    []string // creation order
	logs     map[string][]conversation.Event
	seq      int
	idem     map[string]string
	changed  chan struct{} // closed and replaced when a log grows
	pingErr  error
	failWith error // every call but Recipes and Ping fails with it
	// postedSpan is the span context of the last post's context.
	postedSpan trace.SpanContext
	// ownedLists counts ListOwned calls; logServed the log events Log and
	// LogBefore returned.
	ownedLists int
	logServed  int
	timers     map[string][]store.Timer // by process, in the order armed
	// watches are the open progress watches, by process; watchErr fails
	// every Watch, and refused counts the Watches it failed; watched is
	// closed and replaced when watches change or one is refused.
	watches  map[string][]chan live.Update
	watchErr error
	refused  int
	watched  chan struct{}
}

func newFake() *fake {
	return &fake{
		lib:   recipes.Builtin(),
		inbox: inbox.NewMemory(inbox.MemoryConfig{Limit: store.DefaultInboxLimit, Clock: func() time.Time { return fakeNow }}),
		procs: make(map[string]*store.Record), logs: make(map[string][]conversation.Event),
		idem: make(map[string]string), changed: make(chan struct{}), timers: make(map[string][]store.Timer),
		watches: make(map[string][]chan live.Update), watched: make(chan struct{}),
	}
}

var fakeNow = time.UnixMilli(1_700_000_000_000)

// add puts a process in the fake directly.
func (f *fake) add(id, owner string, st lifecycle.Status) {
	f.addSteered(id, owner, st, inbox.SteeringQueue)
}

// addSteered is add for a process whose running turns take a user's
// messages as steering says.
func (f *fake) addSteered(id, owner string, st lifecycle.Status, steering inbox.Steering) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.inbox.Create(id, st, steering); err != nil {
		panic(err) // a test adds a process twice
	}
	f.procs[id] = &store.Record{ID: id, Recipe: "default", Engine: "chat", Status: st, Owner: owner, Version: 1,
		CreatedAt: fakeNow, UpdatedAt: fakeNow, Steering: steering}
	f.order = append(f.order, id)
}

// sync copies the status, what it waits for, the queued mark and the
// inbox depth of process pid from the inbox to its record. The record's
// calls waiting for approval stay until the process waits for none, as the
// store keeps them until a turn applies their decisions.
func (f *fake) sync(pid string) {
	p, err := f.inbox.Get(pid)
	if rec := f.procs[pid]; err == nil && rec != nil {
		rec.Status, rec.Queued, rec.Inbox, rec.Waiting = p.Status, p.Queued, p.Inbox, p.Waiting
		if p.Waiting != inbox.WaitingApproval {
			rec.Approvals = nil
		}
	}
}

// awaitApproval adds process id of owner BLOCKED, its turn having ended
// with calls waiting for approval, as a node's commit leaves it.
func (f *fake) awaitApproval(id, owner string, calls ...conversation.PendingCall) {
	f.add(id, owner, lifecycle.Status{State: lifecycle.Running})
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.inbox.AwaitApproval(context.Background(), id, "engine", calls); err != nil {
		panic(err)
	}
	f.procs[id].Approvals = calls
	f.sync(id)
}

// remove deletes a process (its log stays, as a stream key would).
func (f *fake) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.procs, id)
	_ = f.inbox.Delete(id)
	f.broadcast()
}

// appendEvents appends events to a log, giving them ids; it returns them.
func (f *fake) appendEvents(pid string, evs ...conversation.Event) []conversation.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.appendLocked(pid, evs...)
}

func (f *fake) appendLocked(pid string, evs ...conversation.Event) []conversation.Event {
	out := make([]conversation.Event, len(evs))
	for i, e := range evs {
		f.seq++
		e.ID = fmt.Sprintf("%d-0", f.seq)
		if e.At.IsZero() {
			e.At = fakeNow
		}
		f.logs[pid] = append(f.logs[pid], e)
		out[i] = e
	}
	f.broadcast()
	return out
}

func (f *fake) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fake) notFound(pid string) error {
	return fmt.Errorf("%w: process %q", store.ErrNotFound, pid)
}

func (f *fake) Create(ctx context.Context, p brain.NewProcess) (store.Record, error) {
	if _, err := f.lib.Get(p.Recipe); err != nil {
		return store.Record{}, fmt.Errorf("brain: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return store.Record{}, f.failWith
	}
	keyed := p.Owner + "\x00" + p.IdempotencyKey
	if id, ok := f.idem[keyed]; ok && p.IdempotencyKey != "" { // as brain.Node.Create
		if rec := f.procs[id]; rec.Recipe == p.Recipe {
			return *rec, nil
		}
		return store.Record{}, fmt.Errorf("%w: %s", brain.ErrIdempotencyKeyReused, id)
	}
	f.seq++
	id := fmt.Sprintf("p_%d", f.seq)
	if p.IdempotencyKey != "" {
		f.idem[keyed] = id
	}
	st := lifecycle.Blocked
	if p.Input != "" {
		st = lifecycle.Ready
	}
	rec := &store.Record{ID: id, Recipe: p.Recipe, Engine: "chat", Status: lifecycle.Status{State: st}, Owner: p.Owner,
		Version: 1, Metadata: p.Metadata, CreatedAt: fakeNow, UpdatedAt: fakeNow}
	if err := f.inbox.Create(id, rec.Status, inbox.SteeringQueue); err != nil {
		return store.Record{}, err
	}
	if p.Input != "" {
		if _, _, err := f.inbox.Post(ctx, id, inbox.Message{Kind: conversation.KindUser, From: "user:" + p.Owner, Content: p.Input}); err != nil {
			return store.Record{}, err
		}
	}
	f.procs[id] = rec
	f.order = append(f.order, id)
	f.sync(id)
	return *rec, nil
}

func (f *fake) Get(_ context.Context, pid string) (store.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return store.Record{}, f.failWith
	}
	rec, ok := f.procs[pid]
	if !ok {
		return store.Record{}, f.notFound(pid)
	}
	return *rec, nil
}

// List pages by creation order; the cursor is "<index>:<id>" of the last
// record, the shape of the store's.
func (f *fake) List(_ context.Context, state lifecycle.State, after string, limit int) ([]store.Record, string, error) {
	return f.list(func(*store.Record) bool { return true }, state, after, limit)
}

// ListOwned is List of owner's processes; it counts its calls.
func (f *fake) ListOwned(_ context.Context, owner string, state lifecycle.State, after string, limit int) ([]store.Record, string, error) {
	f.mu.Lock()
	f.ownedLists++
	f.mu.Unlock()
	return f.list(func(r *store.Record) bool { return r.Owner == owner }, state, after, limit)
}

// ListWorkers is List of parent's workers.
func (f *fake) ListWorkers(_ context.Context, parent string, state lifecycle.State, after string, limit int) ([]store.Record, string, error) {
	return f.list(func(r *store.Record) bool { return r.Parent == parent }, state, after, limit)
}

// list pages the processes that match in state ("" = all).
func (f *fake) list(match func(*store.Record) bool, state lifecycle.State, after string, limit int) ([]store.Record, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return nil, "", f.failWith
	}
	start := 0
	if after != "" {
		n, _, _ := strings.Cut(after, ":")
		i, err := strconv.Atoi(n)
		if err != nil {
			return nil, "", fmt.Errorf("store: list: cursor %q is not one List returned", after)
		}
		start = i + 1
	}
	var recs []store.Record
	next, last := "", -1
	for i := start; i < len(f.order); i++ {
		rec, ok := f.procs[f.order[i]]
		if !ok || (state != "" && rec.Status.State != state) || !match(rec) {
			continue
		}
		if len(recs) == limit {
			next = fmt.Sprintf("%d:%s", last, f.order[last])
			break
		}
		recs = append(recs, *rec)
		last = i
	}
	return recs, next, nil
}

func (f *fake) Send(ctx context.Context, pid, from, content, key string) (string, error) {
	return f.post(ctx, pid, conversation.KindUser, from, content, key)
}

func (f *fake) Steer(ctx context.Context, pid, from, content, key string) (string, error) {
	return f.post(ctx, pid, conversation.KindOperator, from, content, key)
}

// Decide posts the decision as a node does; the inbox takes one decision
// a call.
func (f *fake) Decide(ctx context.Context, pid, from string, d conversation.ApprovalDecision, key string) (string, error) {
	m := inbox.Approval(d, from)
	return f.post(ctx, pid, m.Kind, m.From, m.Content, key)
}

// Approvals returns the records of the processes waiting for approval, by
// id.
func (f *fake) Approvals(context.Context) ([]store.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return nil, f.failWith
	}
	var out []store.Record
	for _, id := range slices.Sorted(maps.Keys(f.procs)) {
		if rec := f.procs[id]; rec.Waiting == inbox.WaitingApproval {
			out = append(out, *rec)
		}
	}
	return out, nil
}

// post posts the message to the inbox, which applies the wake rule (and
// the limit, and the idempotency key), and logs a message it takes at
// once, as if a turn had drained it. No turn runs here: the message stays
// in the inbox as well. The unblock a message causes is not logged.
func (f *fake) post(ctx context.Context, pid string, kind conversation.Kind, from, content, key string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.postedSpan = trace.SpanContextFromContext(ctx)
	if f.failWith != nil {
		return "", f.failWith
	}
	if _, ok := f.procs[pid]; !ok {
		return "", f.notFound(pid)
	}
	id, dup, err := f.inbox.Post(ctx, pid, inbox.Message{Kind: kind, From: from, Content: content, IdempotencyKey: key})
	if err != nil || dup {
		return id, err
	}
	f.sync(pid)
	ev := conversation.NewInboxMessage(id, kind, from, content)
	ev.By = from
	f.appendLocked(pid, ev)
	return id, nil
}

func (f *fake) Transition(ctx context.Context, pid string, ev lifecycle.Event, by string) (store.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return store.Record{}, f.failWith
	}
	rec, ok := f.procs[pid]
	if !ok {
		return store.Record{}, f.notFound(pid)
	}
	tr, err := f.inbox.Fire(ctx, pid, ev, by)
	if err != nil {
		return store.Record{}, fmt.Errorf("store: transition %s: %w", pid, err)
	}
	f.sync(pid)
	rec.Version++
	change := conversation.NewStateChange(string(tr.From), string(tr.To), string(tr.Event))
	change.By = by
	f.appendLocked(pid, change)
	return *rec, nil
}

// Delete deletes a process and its workers, refusing a RUNNING one, as a
// turn's lease makes the store do.
func (f *fake) Delete(_ context.Context, pid string) (store.Record, []string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return store.Record{}, nil, f.failWith
	}
	rec, ok := f.procs[pid]
	if !ok {
		return store.Record{}, nil, f.notFound(pid)
	}
	deleted, workers, err := f.deleteLocked(rec)
	f.broadcast()
	return deleted, workers, err
}

func (f *fake) deleteLocked(rec *store.Record) (store.Record, []string, error) {
	if rec.Status.State == lifecycle.Running {
		return store.Record{}, nil, fmt.Errorf("%w: process %s", store.ErrRunning, rec.ID)
	}
	var deleted []string
	for _, w := range f.procs {
		if w.Parent != rec.ID {
			continue
		}
		_, theirs, err := f.deleteLocked(w)
		deleted = append(deleted, theirs...)
		if err != nil {
			return store.Record{}, deleted, &store.WorkerError{Worker: w.ID, Err: err}
		}
		deleted = append(deleted, w.ID)
	}
	delete(f.procs, rec.ID)
	delete(f.logs, rec.ID)
	_ = f.inbox.Delete(rec.ID)
	return *rec, deleted, nil
}

func seqOf(id string) int {
	n, _, _ := strings.Cut(id, "-")
	i, _ := strconv.Atoi(n)
	return i
}

// after returns the events of pid's log after id.
func (f *fake) after(pid, id string) []conversation.Event {
	var out []conversation.Event
	for _, e := range f.logs[pid] {
		if id == "" || seqOf(e.ID) > seqOf(id) {
			out = append(out, e)
		}
	}
	return out
}

func (f *fake) Log(_ context.Context, pid, after string, limit int) ([]conversation.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return nil, f.failWith
	}
	if _, ok := f.procs[pid]; !ok {
		return nil, f.notFound(pid)
	}
	evs := f.after(pid, after)
	if limit > 0 && len(evs) > limit {
		evs = evs[:limit]
	}
	f.logServed += len(evs)
	return evs, nil
}

// LogBefore returns up to limit events right before event id before (the
// newest when before is empty), oldest first.
func (f *fake) LogBefore(_ context.Context, pid, before string, limit int) ([]conversation.Event, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return nil, false, f.failWith
	}
	if _, ok := f.procs[pid]; !ok {
		return nil, false, f.notFound(pid)
	}
	evs := f.after(pid, "")
	if before != "" {
		evs = evs[:slices.IndexFunc(evs, func(e conversation.Event) bool { return e.ID == before })]
	}
	start := max(len(evs)-limit, 0)
	f.logServed += len(evs) - start
	return slices.Clone(evs[start:]), start > 0, nil
}

// Follow waits up to block for new events. Like the store's, it does not
// notice a process that is gone.
func (f *fake) Follow(ctx context.Context, pid, after string, block time.Duration) ([]conversation.Event, error) {
	t := time.NewTimer(block)
	defer t.Stop()
	for {
		f.mu.Lock()
		if f.failWith != nil {
			f.mu.Unlock()
			return nil, f.failWith
		}
		evs := f.after(pid, after)
		changed := f.changed
		f.mu.Unlock()
		if len(evs) > 0 {
			return evs, nil
		}
		select {
		case <-changed:
		case <-t.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// watchBuffer is how many updates a watch of the fake holds for a reader
// that lags; more are dropped, as a node drops them.
const watchBuffer = 64

// Watch watches pid's progress from now on, as a node does: what publish
// sends after the call, until ctx ends. It fails with watchErr when set.
func (f *fake) Watch(ctx context.Context, pid string) (<-chan live.Update, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.watchErr != nil {
		f.refused++
		f.watchesChanged()
		return nil, f.watchErr
	}
	ch := make(chan live.Update, watchBuffer)
	f.watches[pid] = append(f.watches[pid], ch)
	f.watchesChanged()
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if i := slices.Index(f.watches[pid], ch); i >= 0 { // endWatches may have closed it
			f.watches[pid] = slices.Delete(f.watches[pid], i, i+1)
			close(ch)
			f.watchesChanged()
		}
	})
	return ch, nil
}

func (f *fake) watchesChanged() {
	close(f.watched)
	f.watched = make(chan struct{})
}

// publish sends updates to the watches of their processes; a watch whose
// buffer is full misses them.
func (f *fake) publish(updates ...live.Update) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, u := range updates {
		for _, ch := range f.watches[u.Process] {
			select {
			case ch <- u:
			default:
			}
		}
	}
}

// awaitWatches waits until pid has n open watches.
func (f *fake) awaitWatches(ctx context.Context, pid string, n int) error {
	for {
		f.mu.Lock()
		have, changed := len(f.watches[pid]), f.watched
		f.mu.Unlock()
		if have == n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%s has %d progress watches, want %d: %w", pid, have, n, ctx.Err())
		}
	}
}

// endWatches closes pid's watches, as a node whose watch fails does.
func (f *fake) endWatches(pid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.watches[pid] {
		close(ch)
	}
	delete(f.watches, pid)
	f.watchesChanged()
}

// awaitRefused waits until Watch has refused a watch.
func (f *fake) awaitRefused(ctx context.Context) error {
	for {
		f.mu.Lock()
		refused, changed := f.refused, f.watched
		f.mu.Unlock()
		if refused > 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("no progress watch was refused: %w", ctx.Err())
		}
	}
}

func (f *fake) setWatchErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchErr = err
}

// Inbox returns the messages posted to pid (which no turn drains here).
func (f *fake) Inbox(ctx context.Context, pid string) ([]inbox.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.procs[pid]; !ok {
		return nil, f.notFound(pid)
	}
	if f.failWith != nil {
		return nil, f.failWith
	}
	return f.inbox.Inbox(ctx, pid)
}

// Timers returns the timers armed on pid (the fake does not order them).
func (f *fake) Timers(_ context.Context, pid string) ([]store.Timer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.timers[pid]), f.failWith
}

// ScheduleWakeup arms a timer due In after fakeNow, At, or an hour after
// fakeNow for a cron; the cron "bad" does not parse.
func (f *fake) ScheduleWakeup(_ context.Context, c tools.Caller, w tools.Wakeup) (string, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, ok := f.procs[c.ProcessID]
	switch {
	case !ok:
		return "", time.Time{}, f.notFound(c.ProcessID)
	case rec.Status.State == lifecycle.Done || rec.Status.State == lifecycle.Failed:
		return "", time.Time{}, fmt.Errorf("%w: process %q takes no timers", store.ErrClosed, c.ProcessID)
	case w.Cron == "bad":
		return "", time.Time{}, tools.InvalidArguments(`invalid cron expression "bad"`)
	}
	f.seq++
	t := store.Timer{ID: fmt.Sprintf("w_%d", f.seq), PID: c.ProcessID, Cron: w.Cron, At: w.At, Message: w.Message, Due: fakeNow.Add(time.Hour)}
	if w.In > 0 {
		t.Due = fakeNow.Add(w.In)
		t.At = t.Due
	} else if !w.At.IsZero() {
		t.Due = w.At
	}
	f.timers[c.ProcessID] = append(f.timers[c.ProcessID], t)
	return t.ID, t.Due, nil
}

func (f *fake) CancelWakeup(_ context.Context, c tools.Caller, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.timers[c.ProcessID]
	i := slices.IndexFunc(ts, func(t store.Timer) bool { return t.ID == id })
	if i < 0 {
		return fmt.Errorf("%w: timer %q of process %q", store.ErrNotFound, id, c.ProcessID)
	}
	f.timers[c.ProcessID] = slices.Delete(ts, i, i+1)
	return nil
}

func (f *fake) Recipes() *recipes.Library { return f.lib }

func (f *fake) Ping(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pingErr
}

func (f *fake) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failWith = err
}
