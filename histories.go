package brain

import (
	"sync"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/store"
)

// histories keeps the logs of the processes this node ran last, so that a
// claim reads and decodes only what is new instead of the whole log every
// turn. It holds at most max processes; idle processes fall out first
// (eviction picks an arbitrary entry, which is cheap and good enough).
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
	evs := h.m[pid]
	if len(evs) == 0 {
		return ""
	}
	return evs[len(evs)-1].ID
}

// history returns the whole log before the claimed turn: what is kept
// followed by the claim's History, or the claim's History alone when the
// store sent all of it.
func (h *histories) history(c *store.Claim) []conversation.Event {
	if c.HistoryAfter == "" {
		return c.History
	}
	h.mu.Lock()
	kept := h.m[c.Record.ID]
	h.mu.Unlock()
	if len(kept) == 0 || kept[len(kept)-1].ID != c.HistoryAfter {
		return nil // cannot happen: the store used the id known returned
	}
	return append(kept[:len(kept):len(kept)], c.History...)
}

// keep remembers the log of pid: history followed by current (a claim's
// Current, or after its commit all the turn wrote).
func (h *histories) keep(pid string, history, current []conversation.Event) {
	if h.max <= 0 {
		return
	}
	evs := append(history[:len(history):len(history)], current...)
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.m[pid]; !ok && len(h.m) >= h.max {
		for k := range h.m {
			delete(h.m, k)
			break
		}
	}
	h.m[pid] = evs
}
