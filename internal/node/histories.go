package node

import (
	"sync"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/store"
)

// histories keeps the logs of the processes this node ran last, so that a
// claim reads and decodes only what is new instead of reading the log back
// every turn. It holds at most max processes and maxBytes of events (as
// conversation.Event.Size counts them): long conversations cannot take the
// node's memory. When full, other processes' logs fall out (eviction picks
// arbitrary entries, which is cheap and good enough); a single log larger
// than maxBytes is not kept at all.
//
// It keeps the provider view of each log too (view), so that a turn shows
// the model its history without converting all of it again every round.
//
// A kept log and its view grow in place, so a turn costs what it adds, not
// a copy of the whole log. That is safe because the slices it hands out are
// capped at their length: a holder that appends gets a copy, and the kept
// log only ever writes past every length it handed out.
type histories struct {
	mu       sync.Mutex
	max      int
	maxBytes int
	bytes    int // the sum of the kept logs' sizes
	m        map[string]*kept
}

// kept is the log kept for a process, the provider view of its first
// viewed events, which view brings up to date when asked, and the
// process's record as its last commit left it, when known.
type kept struct {
	events []conversation.Event
	// omitted: events do not start at the beginning of the log (see
	// store.Claim.HistoryOmitted).
	omitted bool
	view    []conversation.Message
	viewed  int
	tokens  int // conversation.ViewTokens(view), counted as it grows
	record  *store.Record
	size    int // of events
}

func newHistories(max, maxBytes int) *histories {
	return &histories{max: max, maxBytes: maxBytes, m: make(map[string]*kept)}
}

// known returns the id of the last event kept for pid ("" when no log is
// kept) and the record kept with the log (nil when none is).
func (h *histories) known(pid string) (string, *store.Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if k := h.m[pid]; k != nil {
		return lastID(k.events), k.record
	}
	return "", nil
}

// keepRecord keeps rec with the log kept for its process, if one is.
func (h *histories) keepRecord(rec store.Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if k := h.m[rec.ID]; k != nil {
		k.record = &rec
	}
}

// view returns conversation.ProviderView of the log kept for pid, or nil
// when none is, and its conversation.ViewTokens. It converts and counts
// only the events kept since it was last asked, when they start where a
// model response ends (a turn's do: each starts with its turn_start), and
// the whole log otherwise.
func (h *histories) view(pid string) ([]conversation.Message, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := h.m[pid]
	if k == nil {
		return nil, 0
	}
	if k.viewed < len(k.events) {
		n := len(k.view)
		var ok bool
		if k.view, ok = conversation.ProviderViewAppend(k.view, k.events[k.viewed:]); ok {
			k.tokens += conversation.ViewTokens(k.view[n:])
		} else {
			k.view = conversation.ProviderView(k.events)
			k.tokens = conversation.ViewTokens(k.view)
		}
		k.viewed = len(k.events)
	}
	return k.view[:len(k.view):len(k.view)], k.tokens
}

// extend adds events to the log kept for pid and returns the whole log.
// after is the id of the event the kept log must end with; "" starts the log
// afresh with events. When the kept log does not end at after, it is dropped
// (the next claim reads the log back) and extend returns nil.
func (h *histories) extend(pid, after string, events []conversation.Event) []conversation.Event {
	log, _ := h.grow(pid, after, events, false)
	return log
}

// grow is extend that also says whether the log it returns omits the
// log's oldest events: those of a log started afresh do when omitted is
// set (see store.Claim.HistoryOmitted).
func (h *histories) grow(pid, after string, events []conversation.Event, omitted bool) ([]conversation.Event, bool) {
	if h.max <= 0 {
		if after != "" {
			return nil, false
		}
		return events[:len(events):len(events)], omitted
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k, ok := h.m[pid]
	switch {
	case after == "":
		h.drop(pid)
		// A copy with room to grow: events belong to the caller.
		k = &kept{events: append(make([]conversation.Event, 0, 2*len(events)+8), events...), omitted: omitted}
	case ok && lastID(k.events) == after:
		k.events = append(k.events, events...)
	default:
		h.drop(pid)
		return nil, false
	}
	added := sizeOf(events)
	k.size += added
	h.bytes += added
	h.m[pid] = k
	if k.size > h.maxBytes {
		h.drop(pid)
	}
	for other := range h.m {
		if len(h.m) <= h.max && h.bytes <= h.maxBytes {
			break
		}
		if other != pid {
			h.drop(other)
		}
	}
	return k.events[:len(k.events):len(k.events)], k.omitted
}

// forget drops the log kept for pid, if any.
func (h *histories) forget(pid string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(pid)
}

// drop forgets the log kept for pid, if any. The caller holds h.mu.
func (h *histories) drop(pid string) {
	if k := h.m[pid]; k != nil {
		h.bytes -= k.size
		delete(h.m, pid)
	}
}

func sizeOf(events []conversation.Event) int {
	n := 0
	for i := range events {
		n += events[i].Size()
	}
	return n
}

// lastID returns the id of the last of events, or "".
func lastID(events []conversation.Event) string {
	if len(events) == 0 {
		return ""
	}
	return events[len(events)-1].ID
}
