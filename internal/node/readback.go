package node

import (
	"context"
	"errors"
	"slices"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/store"
)

// turnHistory returns the log before claim's turn, and whether it omits
// the log's oldest events: the kept log and what the claim read after it,
// or, without a kept log (evicted, say, for another process's between the
// claim asking what follows it and now), the newest part of the log that
// a model shown at most window tokens needs (readBack), kept from then on.
// kept is the record kept with the log: a log trimmed since (by another
// node's commit) may have lost events the kept one lacks, so it is read
// back too.
func (n *Node) turnHistory(ctx context.Context, claim *store.Claim, kept *store.Record, window int) ([]conversation.Event, bool, error) {
	pid := claim.Record.ID
	if claim.HistoryAfter != "" {
		trimmed := int64(0)
		if kept != nil {
			trimmed = kept.Trimmed
		}
		if claim.Record.Trimmed != trimmed {
			n.histories.forget(pid)
		} else if history, omitted := n.histories.grow(pid, claim.HistoryAfter, claim.History, false); history != nil {
			n.cfg.Metrics.history("kept")
			return history, omitted, nil
		}
		if len(claim.Current) == 0 {
			return nil, false, errors.New("the claim holds no turn start")
		}
		claim.History, claim.HistoryOmitted = nil, true // read back from the turn's start
	}
	history, omitted, err := n.readBack(ctx, claim, window)
	if err != nil {
		return nil, false, err
	}
	n.cfg.Metrics.history("read_back")
	history, _ = n.histories.grow(pid, "", history, omitted)
	return history, omitted, nil
}

// readBack returns claim.History, read further back while it omits the
// oldest events and its provider view is smaller than window and a quarter
// (Fit's step, so that a model call is shown as much as the whole log
// would show it), then cut to the newest turns that view needs (cutFor);
// and whether it omits some of the log. Each read takes twice the events
// of the one before, up to maxHistoryPage.
func (n *Node) readBack(ctx context.Context, claim *store.Claim, window int) ([]conversation.Event, bool, error) {
	history, more := claim.History, claim.HistoryOmitted
	if !more {
		return history, false, nil
	}
	want := window + window/4
	tokens := conversation.ViewTokens(conversation.ProviderView(history))
	for page := store.HistoryPage; more && tokens < want; page = min(2*page, maxHistoryPage) {
		before := claim.Current[0].ID
		if len(history) > 0 {
			before = history[0].ID
		}
		older, earlier, err := n.store.LogBefore(ctx, claim.Record.ID, before, page)
		if err != nil {
			return nil, false, err
		}
		tokens += conversation.ViewTokens(conversation.ProviderView(older))
		history, more = append(older, history...), earlier
	}
	// A trimmed log read back to its first event still lacks its beginning,
	// and may start inside a turn.
	omitted := more || claim.Record.Trimmed > 0
	if cut := cutFor(history, want, omitted); cut > 0 || omitted {
		history, omitted = history[cut:], true
	}
	return history[:len(history):len(history)], omitted, nil
}

// cutFor returns where to cut history, the newest events of a log (all of
// it unless omitted), so that it starts at a turn's start (no exchange is
// cut in two) and holds the newest turns whose provider views reach want
// tokens, and no more; when they never do, at its first turn's start if
// it omits older events. 0 keeps it whole: what comes before a log's
// first turn the model is never shown.
func cutFor(history []conversation.Event, want int, omitted bool) int {
	isStart := func(e conversation.Event) bool { return e.Type == conversation.TypeTurnStart }
	tokens, end, first := 0, len(history), len(history)
	for i := len(history) - 1; i >= 0; i-- {
		if !isStart(history[i]) {
			continue
		}
		tokens += conversation.ViewTokens(conversation.ProviderView(history[i:end]))
		end, first = i, i
		if tokens >= want {
			if !omitted && !slices.ContainsFunc(history[:i], isStart) {
				return 0
			}
			return i
		}
	}
	if omitted {
		return first
	}
	return 0
}

// maxHistoryPage bounds the events readBack reads at once.
const maxHistoryPage = 4096

// keepTurn keeps the log of a committed turn whole, its own writes
// included, when nobody else wrote to it meanwhile: the next claim then
// reads only what came after (a message's unblocking, the next turn's
// start), not this turn's events back. A commit that trimmed the log (rec
// is the record it left) drops the kept one, whose oldest events are gone
// from the log (the next claim reads the log back), and is counted in the
// metrics.
func (n *Node) keepTurn(claim *store.Claim, rec store.Record) {
	if rec.Trimmed != claim.Record.Trimmed {
		n.cfg.Metrics.observeTrim(claim, rec)
		n.histories.forget(claim.Record.ID)
		return
	}
	if !claim.Gapless {
		return
	}
	after := lastID(claim.Current)
	if after == "" {
		after = lastID(claim.History)
	}
	n.histories.extend(claim.Record.ID, after, claim.Appended)
}
