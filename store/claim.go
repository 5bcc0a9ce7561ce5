package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
)

// Claim is a node's hold on a process for one turn: its lease (Node and the
// fencing Token), the wake that started it and the log the turn starts from.
type Claim struct {
	// Record is the process after the claim (RUNNING).
	Record Record
	Node   string
	// Token is the fencing token: every write of the turn carries it, and a
	// newer claim of the process makes it stale.
	Token int64
	Wake  Wake
	// TurnID is the id of the turn: the one given to Claim, or on recovery
	// the interrupted turn's.
	TurnID string
	// Recovered says the turn was interrupted by a node that died and is
	// resumed here.
	Recovered bool
	// History is the log before this turn: all of it, or, when HistoryAfter
	// is set (ClaimAfter), only the events after that id.
	History      []conversation.Event
	HistoryAfter string
	// Current is what this turn has committed so far, from its turn_start:
	// the turn_start, the wake state change and the drained inbox_message
	// events; on recovery everything the interrupted turn checkpointed,
	// then the recover and wake state changes.
	Current []conversation.Event
	// Appended are the events the claim's checkpoints and commit wrote
	// after Current, with their ids, as long as nothing else was written to
	// the log in between (Gapless): the log is then History, Current and
	// Appended, and a node that keeps it need not read its own events back
	// at the next claim. Once another writer came between (an operator's
	// pause, say), Gapless is false and Appended stops growing.
	Appended []conversation.Event
	Gapless  bool
	// logLen is how many events the log holds, Current and Appended
	// included, while Gapless: the scripts check that the log still holds
	// that many (it only grows) to know that nobody wrote in between.
	logLen int
}

// knownLen returns, for the scripts, how many events the claim knows the
// log to hold, or "" once it does not know.
func (c *Claim) knownLen() string {
	if !c.Gapless {
		return ""
	}
	return strconv.Itoa(c.logLen)
}

// appended records events written with ids after the claim's last one;
// gapless says nothing else was written in between.
func (c *Claim) appended(gapless bool, events []conversation.Event, ids []string, now time.Time) {
	if !c.Gapless || !gapless || len(ids) < len(events) {
		c.Gapless = false
		return
	}
	for i, e := range events {
		if e.At.IsZero() {
			e.At = now // as encodeEvents stored it
		}
		e.ID = ids[i]
		c.Appended = append(c.Appended, e)
	}
	c.logLen += len(events)
}

// leaseValue is what the lease key holds for c.
func (c *Claim) leaseValue() string { return c.Node + "|" + strconv.FormatInt(c.Token, 10) }

// Claim takes wake w for node in one atomic step and starts turn turnID
// (generated when empty).
//
// A READY process is leased (a new fencing token, the lease for LeaseTTL),
// fires wake (RUNNING), and its turn starts in the log: turn_start (reason
// "wake"), the wake state change, then one inbox_message event per pending
// inbox message, which leave the inbox in the same step (the drain: exactly
// once). A RUNNING process without a live lease (its node died) is leased
// again and recovered: recover and wake state changes are appended, the
// interrupted turn's id is reused, Recovered is set and nothing is drained.
//
// ErrNothingToDo means the wake starts no turn: a turn is running under a
// live lease, or the process is BLOCKED, PAUSED, DONE or FAILED. The store
// has settled the wake (acknowledged it, or left it pending when it is the
// running turn's own, through which a dead node is recovered): the caller
// must not acknowledge it. A wake of an unknown process is acknowledged
// and returns ErrNotFound.
func (s *Store) Claim(ctx context.Context, w Wake, node, turnID string) (*Claim, error) {
	return s.ClaimAfter(ctx, w, node, turnID, "", nil)
}

// ClaimAfter is Claim for a caller that already has the process's log up to
// the event with id known: the claim's History then holds only the events
// after it (see Claim.HistoryAfter), which saves reading and decoding the
// whole log on every turn. kept, when not nil, is the process's record as
// the caller has it (from its last Commit, say): only what turns change
// (see Record.setStatus) is read back, the rest is kept's.
func (s *Store) ClaimAfter(ctx context.Context, w Wake, node, turnID, known string, kept *Record) (*Claim, error) {
	if !validID(w.PID) {
		return nil, fmt.Errorf("%w: process %q", ErrNotFound, w.PID)
	}
	if kept != nil && kept.ID != w.PID {
		return nil, fmt.Errorf("store: claim %s: the kept record is %s's", w.PID, kept.ID)
	}
	if node == "" {
		return nil, errors.New("store: claim: node is empty")
	}
	if turnID == "" {
		turnID = "t_" + strings.ToLower(newID()[2:])
	}
	now := s.now()
	args := s.processArgs(w.PID, now)
	hasRecord := "0"
	if kept != nil {
		hasRecord = "1"
	}
	args = append(args, node, s.cfg.LeaseTTL.Milliseconds(), turnID, w.Stream, w.EntryID, known, hasRecord)
	// Without a known id the log is read whole right after the script,
	// outside Lua (see script.RunThen); otherwise the script returns what
	// follows known, usually an event or two.
	var then []redis.Cmder
	var whole *redis.SliceCmd
	if known == "" {
		whole = redis.NewSliceCmd(ctx, "xrange", eventsKey(w.PID), "-", "+")
		then = []redis.Cmder{whole}
	}
	status, res, err := s.runThen(ctx, s.scripts.claim, then, processKeys(w.PID), args...)
	switch {
	case err != nil:
		return nil, fmt.Errorf("store: claim %s: %w", w.PID, err)
	case status == "NOTFOUND":
		return nil, fmt.Errorf("%w: process %q", ErrNotFound, w.PID)
	case status == "BUSY":
		return nil, fmt.Errorf("%w: process %s: a turn is running under a live lease", ErrNothingToDo, w.PID)
	case status == "IDLE":
		return nil, fmt.Errorf("%w: process %s is %s", ErrNothingToDo, w.PID, str(res[0]))
	case status != "OK" || len(res) < 9:
		return nil, fmt.Errorf("store: claim %s: unexpected reply %q", w.PID, status)
	}
	token, err := strconv.ParseInt(str(res[0]), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("store: claim %s: token %q: %w", w.PID, str(res[0]), err)
	}
	var rec Record
	if kept != nil {
		rec = *kept
		rec.Inbox = 0                            // as a claim's record says
		rec.Metadata = maps.Clone(kept.Metadata) // the claim's own, as parsed
		err = rec.setStatus(hash(res[4]))
	} else {
		rec, err = parseRecord(w.PID, hash(res[4]))
	}
	if err != nil {
		return nil, err
	}
	logLen, ok := res[8].(int64)
	if !ok {
		return nil, fmt.Errorf("store: claim %s: unexpected log length %v", w.PID, res[8])
	}
	c := &Claim{Record: rec, Node: node, Token: token, Wake: w, TurnID: str(res[2]), Recovered: str(res[1]) == "1",
		HistoryAfter: str(res[6]), Gapless: true, logLen: int(logLen)} // the log came back to its end
	turnAt := str(res[3])
	log, err := s.events(strs(res[5]), res[7], now)
	if err == nil && whole != nil {
		log, err = wholeLog(whole, log)
	}
	if err != nil {
		return nil, fmt.Errorf("store: claim %s: %w", w.PID, err)
	}
	split := slices.IndexFunc(log, func(e conversation.Event) bool { return e.ID == turnAt })
	if split < 0 {
		return nil, fmt.Errorf("store: claim %s: the turn's turn_start %s is not in the log", w.PID, turnAt)
	}
	c.History, c.Current = log[:split:split], log[split:]
	return c, nil
}

// wholeLog returns the log read right after a claim's script (whole, an
// XRANGE reply) up to own, the events the script wrote, then own: what
// others wrote is decoded, the claim's own events are not.
func wholeLog(whole *redis.SliceCmd, own []conversation.Event) ([]conversation.Event, error) {
	reply, err := whole.Result()
	if err != nil {
		return nil, fmt.Errorf("read the log: %w", err)
	}
	if len(own) == 0 {
		return nil, errors.New("the script wrote no event")
	}
	log := make([]conversation.Event, 0, len(reply)+len(own))
	for _, r := range reply {
		entry, _ := r.([]any)
		if len(entry) < 2 {
			return nil, fmt.Errorf("unexpected log entry %v", r)
		}
		id := str(entry[0])
		if id == own[0].ID {
			return append(log, own...), nil
		}
		e, err := decodeEvent(id, hash(entry[1])["e"])
		if err != nil {
			return nil, err
		}
		log = append(log, e)
	}
	return nil, fmt.Errorf("the log read after the claim lacks its event %s", own[0].ID)
}

// RenewLease extends the claim's lease by LeaseTTL, or returns ErrFenced
// when it is no longer the claim's.
func (s *Store) RenewLease(ctx context.Context, c *Claim) error {
	ok, err := s.scripts.renew.Run(ctx, s.batch, []string{leaseKey(c.Record.ID)}, c.leaseValue(), s.cfg.LeaseTTL.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("store: renew lease of %s: %w", c.Record.ID, err)
	}
	if ok != 1 {
		return fmt.Errorf("%w: process %s: lease of %s lost", ErrFenced, c.Record.ID, c.leaseValue())
	}
	return nil
}

// Checkpoint appends events of the claim's turn to the log, if the claim
// still holds the lease and the newest fencing token; otherwise it writes
// nothing and returns ErrFenced. Invalid events write nothing either.
func (s *Store) Checkpoint(ctx context.Context, c *Claim, events []conversation.Event) error {
	now := s.now()
	evs, err := encodeEvents(events, now)
	if err != nil {
		return fmt.Errorf("store: checkpoint %s: %w", c.Record.ID, err)
	}
	args := s.processArgs(c.Record.ID, now)
	args = append(args, c.leaseValue(), strconv.FormatInt(c.Token, 10), c.knownLen())
	args = append(args, evs...)
	status, res, err := s.run(ctx, s.scripts.checkpoint, processKeys(c.Record.ID), args...)
	switch {
	case err != nil:
		return fmt.Errorf("store: checkpoint %s: %w", c.Record.ID, err)
	case status == "FENCED":
		return fmt.Errorf("%w: process %s: claim %s", ErrFenced, c.Record.ID, c.leaseValue())
	case status != "OK" || len(res) < 1:
		return fmt.Errorf("store: checkpoint %s: unexpected reply %q", c.Record.ID, status)
	}
	c.appended(str(res[0]) == "1", events, strs(res[1:]), now)
	return nil
}

// Release gives the claim's lease up without committing (a graceful stop):
// the process stays RUNNING and its wake stays pending, so another node
// recovers the turn once the wake is stale. It returns ErrFenced when the
// lease was not the claim's any more.
func (s *Store) Release(ctx context.Context, c *Claim) error {
	ok, err := s.scripts.release.Run(ctx, s.batch, []string{leaseKey(c.Record.ID)}, c.leaseValue()).Int()
	if err != nil {
		return fmt.Errorf("store: release %s: %w", c.Record.ID, err)
	}
	if ok != 1 {
		return fmt.Errorf("%w: process %s: lease of %s already lost", ErrFenced, c.Record.ID, c.leaseValue())
	}
	return nil
}
