package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
)

// Timer is an inbox timer (inbox.Timer): the store keeps Due, and the
// scheduler the rest.
type Timer = inbox.Timer

// timerSpec is a timer as stored in B timers:<pid> (doc.go).
type timerSpec struct {
	ID      string    `json:"id"`
	PID     string    `json:"pid"`
	Cron    string    `json:"cron,omitempty"`
	At      time.Time `json:"at,omitzero"`
	Message string    `json:"message"`
	Due     int64     `json:"due"` // unix ms
	// Decision: a timer that rejects a call not decided in time.
	Decision *conversation.ApprovalDecision `json:"decision,omitempty"`
}

// specOf is t as stored.
func specOf(t Timer) (string, error) {
	b, err := json.Marshal(timerSpec{ID: t.ID, PID: t.PID, Cron: t.Cron, At: t.At.UTC(), Message: t.Message, Due: t.Due.UnixMilli(),
		Decision: t.Decision})
	return string(b), err
}

func parseTimer(spec string) (Timer, error) {
	var sp timerSpec
	if err := json.Unmarshal([]byte(spec), &sp); err != nil {
		return Timer{}, fmt.Errorf("store: corrupt timer spec: %w", err)
	}
	return Timer{ID: sp.ID, PID: sp.PID, Cron: sp.Cron, At: sp.At, Message: sp.Message, Due: time.UnixMilli(sp.Due), Decision: sp.Decision}, nil
}

// validateTimer checks what the store needs of t.
func validateTimer(t Timer) error {
	var errs []error
	if t.ID == "" {
		errs = append(errs, errors.New("ID: required"))
	}
	if !validID(t.PID) {
		errs = append(errs, fmt.Errorf("PID: %q is not a process id", t.PID))
	}
	if t.Due.IsZero() {
		errs = append(errs, errors.New("Due: required"))
	}
	return errors.Join(errs...)
}

// PutTimer stores t and schedules it at t.Due, replacing a timer of the
// same process with the same id. The process must exist (ErrNotFound) and
// be open (ErrClosed).
func (s *Store) PutTimer(ctx context.Context, t Timer) error {
	return s.putTimer(ctx, t, false)
}

// PutTimerOnce is PutTimer for a caller that may put the same timer again
// (a resumed turn's tool call, under an id derived from the call): a
// one-shot timer of that id that fired in the last day (FireTimer) is not
// armed again, and ErrTimerFired says so.
func (s *Store) PutTimerOnce(ctx context.Context, t Timer) error {
	return s.putTimer(ctx, t, true)
}

// ErrTimerFired: PutTimerOnce found that the one-shot timer had fired.
var ErrTimerFired = errors.New("store: the timer has fired")

func (s *Store) putTimer(ctx context.Context, t Timer, once bool) error {
	if err := validateTimer(t); err != nil {
		return fmt.Errorf("store: put timer: %w", err)
	}
	spec, err := specOf(t)
	if err != nil {
		return fmt.Errorf("store: put timer %s: %w", t.ID, err)
	}
	args := s.processArgs(t.PID, s.now())
	onceArg := "0"
	if once {
		onceArg = "1"
	}
	args = append(args, t.ID, t.Due.UnixMilli(), spec, onceArg)
	status, _, err := s.run(ctx, s.scripts.putTimer, append(s.keys.processKeys(t.PID), s.keys.due(s.keys.partition(t.PID))), args...)
	switch {
	case err != nil:
		return fmt.Errorf("store: put timer %s of %s: %w", t.ID, t.PID, err)
	case status == "NOTFOUND":
		return fmt.Errorf("%w: process %q", ErrNotFound, t.PID)
	case status == "CLOSED":
		return fmt.Errorf("%w: process %q takes no timers", ErrClosed, t.PID)
	case status == "FIRED":
		return fmt.Errorf("%w: timer %s of %s", ErrTimerFired, t.ID, t.PID)
	case status != "OK":
		return fmt.Errorf("store: put timer %s of %s: unexpected reply %q", t.ID, t.PID, status)
	}
	return nil
}

// CancelTimer removes timer id of process pid, or returns ErrNotFound.
func (s *Store) CancelTimer(ctx context.Context, pid, id string) error {
	if !validID(pid) {
		return fmt.Errorf("%w: process %q", ErrNotFound, pid)
	}
	var del *redis.IntCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		del = p.HDel(ctx, s.keys.timersOf(pid), id)
		p.ZRem(ctx, s.keys.due(s.keys.partition(pid)), pid+"|"+id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: cancel timer %s of %s: %w", id, pid, err)
	}
	if del.Val() == 0 {
		return fmt.Errorf("%w: timer %q of process %q", ErrNotFound, id, pid)
	}
	return nil
}

// Timers returns the timers of process pid, by due time then id.
func (s *Store) Timers(ctx context.Context, pid string) ([]Timer, error) {
	if !validID(pid) {
		return nil, nil
	}
	specs, err := s.rdb.HVals(ctx, s.keys.timersOf(pid)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: timers of %s: %w", pid, err)
	}
	timers := make([]Timer, 0, len(specs))
	for _, sp := range specs {
		t, err := parseTimer(sp)
		if err != nil {
			return nil, err
		}
		timers = append(timers, t)
	}
	slices.SortFunc(timers, func(a, b Timer) int {
		return cmp.Or(a.Due.Compare(b.Due), strings.Compare(a.ID, b.ID))
	})
	return timers, nil
}

// DueTimers returns at most limit timers (all when limit <= 0) due at or
// before now, earliest first, from every partition's timer index. Due
// comes from the schedule, which is what FireTimer compares.
func (s *Store) DueTimers(ctx context.Context, now time.Time, limit int) ([]Timer, error) {
	if limit <= 0 {
		limit = -1 // ZRANGEBYSCORE LIMIT 0 -1: all
	}
	var (
		mu     sync.Mutex
		timers []Timer
	)
	err := each(ctx, len(s.keys.bases), func(ctx context.Context, n int) error {
		flat, err := s.scripts.dueTimers.Run(ctx, s.batch, []string{s.keys.due(n)}, now.UnixMilli(), limit, s.keys.base(n)).StringSlice()
		if err != nil {
			return err
		}
		due, err := parseDue(flat)
		mu.Lock()
		timers = append(timers, due...)
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: due timers: %w", err)
	}
	slices.SortFunc(timers, func(a, b Timer) int {
		return cmp.Or(a.Due.Compare(b.Due), strings.Compare(a.PID, b.PID), strings.Compare(a.ID, b.ID))
	})
	if limit > 0 && len(timers) > limit {
		timers = timers[:limit]
	}
	return timers, nil
}

// parseDue reads the reply of due_timers.lua.
func parseDue(flat []string) ([]Timer, error) {
	var err error
	timers := make([]Timer, 0, len(flat)/3)
	for i := 0; i+2 < len(flat); i += 3 {
		pid, id, _ := strings.Cut(flat[i], "|")
		t := Timer{ID: id, PID: pid}
		if flat[i+2] != "" {
			if t, err = parseTimer(flat[i+2]); err != nil {
				return nil, err
			}
		}
		ms, err := strconv.ParseFloat(flat[i+1], 64)
		if err != nil {
			return nil, fmt.Errorf("score %q: %w", flat[i+1], err)
		}
		t.Due = time.UnixMilli(int64(ms))
		timers = append(timers, t)
	}
	return timers, nil
}

// ApprovalTimeout is the sender of the rejection a timer posts for a call
// not decided in time (Timer.Decision).
const ApprovalTimeout = "timeout"

// FireTimer fires t once across all nodes: only a caller that still finds
// t scheduled at t.Due (nobody fired or moved it) rearms it at next, or
// removes it when next is zero, and posts a schedule message (from
// "timer:<id>", content t.Message) with Post's semantics, in one atomic
// step; it returns fired=true. A timer with a Decision posts it instead,
// as an approval from ApprovalTimeout, unless the call was decided first
// (fired=false then). While the message of t's last firing still
// waits in the inbox, no other is posted: the process reads one tick, not
// one per firing it slept through. A timer of a process that is gone, DONE
// or FAILED is removed and not fired. A timer whose process's inbox is
// full fires and moves on, but its message is dropped: it returns
// fired=true and an error wrapping ErrInboxFull.
func (s *Store) FireTimer(ctx context.Context, t Timer, next time.Time) (fired bool, err error) {
	if err := validateTimer(t); err != nil {
		return false, fmt.Errorf("store: fire timer: %w", err)
	}
	nextMs, spec := int64(0), ""
	if !next.IsZero() {
		n := t
		n.Due = next
		if spec, err = specOf(n); err != nil {
			return false, fmt.Errorf("store: fire timer %s: %w", t.ID, err)
		}
		nextMs = next.UnixMilli()
	}
	now := s.now()
	args := s.processArgs(t.PID, now)
	kind, from, content, call := conversation.KindSchedule, "timer:"+t.ID, t.Message, ""
	if d := t.Decision; d != nil {
		m := inbox.Approval(*d, ApprovalTimeout)
		kind, from, content, call = m.Kind, m.From, m.Content, d.CallID
	}
	args = append(args, t.ID, t.Due.UnixMilli(), nextMs, spec, from, content, now.UnixMilli(), s.inboxLimit(),
		idempotencyTTL.Milliseconds(), string(kind), call)
	status, _, err := s.run(ctx, s.scripts.fireTimer, append(s.keys.processKeys(t.PID), s.keys.due(s.keys.partition(t.PID))), args...)
	if err != nil {
		return false, fmt.Errorf("store: fire timer %s of %s: %w", t.ID, t.PID, err)
	}
	if status == "FULL" {
		return true, fmt.Errorf("store: fire timer %s: tick dropped: %w", t.ID, &InboxFullError{PID: t.PID, Limit: s.cfg.InboxLimit})
	}
	return status == "FIRED" || status == "WAITING", nil
}
