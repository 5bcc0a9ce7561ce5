package brain

import (
	"sync"

	"github.com/engine-brain/brain/conversation"
)

// histories keeps the logs of the processes this node ran last, so that a
// claim reads and decodes only what is new instead of the whole log every
// turn. It holds at most max processes; idle processes fall out first
// (eviction picks an arbitrary entry, which is cheap and good enough).
//
// A kept log grows in place, so a turn costs what it adds, not a copy of
// the whole log. That is safe because the slices it hands out are capped
// at their length: a holder that appends gets a copy, and the kept log only
// ever writes past every length it handed out.
type histories struct {
	mu  sync.Mutex
	max int
	m   map[string][]conversation.Event
}

func newHistories(max int) *histories {
	return &histories{max: max, m: make(map[string][]conversation.Event)}
}

// known returns the id of the last event kept for pid, or "".
func (h *histories) known(pid string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return lastID(h.m[pid])
}

// extend adds events to the log kept for pid and returns the whole kept
// log. after is the id of the event the kept log must end with; "" starts
// the log afresh with events. When the kept log does not end at after, it
// is dropped (the next claim reads the whole log) and extend returns nil.
func (h *histories) extend(pid, after string, events []conversation.Event) []conversation.Event {
	if h.max <= 0 {
		if after != "" {
			return nil
		}
		return events[:len(events):len(events)]
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	kept, ok := h.m[pid]
	switch {
	case after == "":
		// A copy with room to grow: events belong to the caller.
		kept = append(make([]conversation.Event, 0, 2*len(events)+8), events...)
	case ok && lastID(kept) == after:
		kept = append(kept, events...)
	default:
		delete(h.m, pid)
		return nil
	}
	if !ok && len(h.m) >= h.max {
		for k := range h.m {
			delete(h.m, k)
			break
		}
	}
	h.m[pid] = kept
	return kept[:len(kept):len(kept)]
}

// lastID returns the id of the last of events, or "".
func lastID(events []conversation.Event) string {
	if len(events) == 0 {
		return ""
	}
	return events[len(events)-1].ID
}
