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
	// TraceParents are the trace parents of the messages the claim drained
	// that have one (Message.TraceParent), in order: the turn's span links
	// to them. A recovered turn drains nothing, and has none.
	TraceParents []string
	// History is the log before this turn: when HistoryAfter is set
	// (ClaimAfter), only the events after that id; else its newest events,
	// all of them unless HistoryOmitted.
	History      []conversation.Event
	HistoryAfter string
	// HistoryOmitted says that History may not start at the process's
	// first event: a claim reads at most the newest HistoryPage events of a
	// log it has none of (a long-lived process's log grows without end, and
	// a model is shown only its newest part; LogBefore reads further back),
	// and a log trimmed to KeepEvents has lost its oldest (Record.Trimmed).
	HistoryOmitted bool
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
	// KeepEvents, when more than 0, is the most events the log keeps: the
	// commit trims older ones (in whole blocks of the stream, so a few
	// more may stay) and counts them in Record.Trimmed. The recipe's
	// limits.max_log_events; 0 keeps every event.
	KeepEvents int
	// logLen is how many events the log holds, Current and Appended
	// included, while Gapless: the scripts check that the log still holds
	// that many (it only grows while the claim holds the lease) to know
	// that nobody wrote in between.
	logLen int
	// tokens are what the model calls of this turn used, as its
	// model_usage events say (Current's too: an interrupted turn's were
	// never counted): Commit adds them to the record's totals.
	tokens Tokens
}

// plus returns t with the tokens the model_usage events among events
// report.
func (t Tokens) plus(events []conversation.Event) Tokens {
	in, out := conversation.TokensUsed(events)
	return Tokens{Input: t.Input + in, Output: t.Output + out}
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
	args = append(args, node, s.cfg.LeaseTTL.Milliseconds(), turnID, w.Stream, w.EntryID, hasRecord)
	// The log the caller lacks is read right after the script, outside Lua
	// (see script.RunThen): its newest HistoryPage events, or what follows
	// known, usually an event or two, so only the first tailRead entries
	// (see setLog).
	read := []any{"xrevrange", s.keys.events(w.PID), "+", "-", "COUNT", HistoryPage}
	if known != "" {
		read = []any{"xrange", s.keys.events(w.PID), "(" + known, "+", "COUNT", tailRead}
	}
	tail := redis.NewSliceCmd(ctx, read...)
	status, res, err := s.runThen(ctx, s.scripts.claim, []redis.Cmder{tail}, s.keys.processKeys(w.PID)[:4], args...)
	switch {
	case err != nil:
		return nil, fmt.Errorf("store: claim %s: %w", w.PID, err)
	case status == "NOTFOUND":
		return nil, fmt.Errorf("%w: process %q", ErrNotFound, w.PID)
	case status == "BUSY":
		return nil, fmt.Errorf("%w: process %s: a turn is running under a live lease", ErrNothingToDo, w.PID)
	case status == "IDLE":
		return nil, fmt.Errorf("%w: process %s is %s", ErrNothingToDo, w.PID, str(res[0]))
	case status != "OK" || len(res) < 7:
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
	logLen, ok := res[6].(int64)
	if !ok {
		return nil, fmt.Errorf("store: claim %s: unexpected log length %v", w.PID, res[6])
	}
	c := &Claim{Record: rec, Node: node, Token: token, Wake: w, TurnID: str(res[2]), Recovered: str(res[1]) == "1",
		HistoryAfter: known, Gapless: true, logLen: int(logLen)} // the log came back to its end
	if len(res) > 7 {
		c.TraceParents = strs(res[7])
	}
	own, err := s.made(res[5], now)
	if err == nil && len(own) == 0 {
		err = errors.New("the script wrote no event")
	}
	if err == nil {
		err = c.setLog(ctx, s, tail, str(res[3]), own)
	}
	if err != nil {
		return nil, fmt.Errorf("store: claim %s: %w", w.PID, err)
	}
	return c, nil
}

// tailRead is how many entries a claim reads at first of the log after the
// event its caller knows: enough for what others usually write between two
// turns (the unblocking of a message, or nothing) and the claim's first own
// event. What more there is takes a second read.
const tailRead = 2

// HistoryPage is how many events of a log a claim reads when it has none
// of them, and LogBefore's usual page: enough for most conversations
// whole.
const HistoryPage = 256

// setLog sets the claim's History and Current from tail, the log read right
// after the claim's script (its newest HistoryPage events, or, with
// c.HistoryAfter, what follows that), and own, the events the script wrote
// (they end the log; what comes before them others wrote); the turn starts
// at turnAt, its turn_start. When a read of tailRead entries after
// c.HistoryAfter stopped short of own, the rest is read. Whatever was
// read, the log is read further back until it holds turnAt (that of a
// turn now recovered may be older), and when the log kept up to
// c.HistoryAfter lacks it, the claim reads the log's newest events instead.
func (c *Claim) setLog(ctx context.Context, s *Store, tail *redis.SliceCmd, turnAt string, own []conversation.Event) error {
	reply, err := tail.Result()
	if err != nil {
		return fmt.Errorf("read the log: %w", err)
	}
	pid, first := c.Record.ID, own[0].ID
	entries := logEntries(reply)
	if c.HistoryAfter == "" {
		slices.Reverse(entries) // read newest first
		c.HistoryOmitted = len(entries) == HistoryPage
	}
	switch mine := slices.IndexFunc(entries, func(e logEntry) bool { return e.id == first }); {
	case mine >= 0:
		entries = entries[:mine]
	case c.HistoryAfter != "" && len(entries) == tailRead:
		rest, err := s.logBetween(ctx, pid, entries[len(entries)-1].id, first)
		if err != nil {
			return err
		}
		entries = append(entries, rest...)
	case c.HistoryAfter == "" && c.HistoryOmitted:
		entries = nil // the page held only the claim's own events: read before them
	default:
		return fmt.Errorf("the log read after the claim lacks its event %s", first)
	}
	inLog := func(e logEntry) bool { return e.id == turnAt }
	inOwn := func(e conversation.Event) bool { return e.ID == turnAt }
	if c.HistoryAfter != "" && !slices.ContainsFunc(entries, inLog) && !slices.ContainsFunc(own, inOwn) {
		c.HistoryAfter, c.HistoryOmitted, entries = "", true, nil // read back from first
	}
	for c.HistoryOmitted && !slices.ContainsFunc(entries, inLog) && !slices.ContainsFunc(own, inOwn) {
		before := first
		if len(entries) > 0 {
			before = entries[0].id
		}
		page, more, err := s.logPageBefore(ctx, pid, before, HistoryPage)
		if err != nil {
			return err
		}
		entries, c.HistoryOmitted = append(page, entries...), more
	}
	c.HistoryOmitted = c.HistoryOmitted || c.HistoryAfter == "" && c.Record.Trimmed > 0
	log := make([]conversation.Event, 0, len(entries)+len(own))
	for _, e := range entries {
		ev, err := s.decodeEvent(e.id, e.data)
		if err != nil {
			return err
		}
		log = append(log, ev)
	}
	log = append(log, own...)
	split := slices.IndexFunc(log, inOwn)
	if split < 0 {
		return fmt.Errorf("the turn's turn_start %s is not in the log", turnAt)
	}
	c.History, c.Current = log[:split:split], log[split:]
	c.tokens = Tokens{}.plus(c.Current)
	return nil
}
