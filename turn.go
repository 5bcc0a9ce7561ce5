package brain

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// runWake claims the process of wake w and plays its turn: drain (in the
// claim), engine rounds with a checkpoint after each, commit.
func (n *Node) runWake(ctx context.Context, w store.Wake) {
	// Lazy: most turns log nothing, and an eager With costs a copy per turn.
	log := n.log.WithLazy(zap.String("process", w.PID))
	known, kept := n.histories.known(w.PID)
	claim, err := n.store.ClaimAfter(ctx, w, n.cfg.NodeID, "t_"+rand.Text()[:10], known, kept)
	if errors.Is(err, store.ErrNothingToDo) || errors.Is(err, store.ErrNotFound) {
		return // the store has settled the wake
	}
	if err != nil {
		log.Warn("claim failed", zap.Error(err))
		return
	}
	log = log.WithLazy(zap.String("recipe", claim.Record.Recipe), zap.String("turn", claim.TurnID))
	setup, err := n.prepare(claim.Record)
	if err != nil {
		log.Error("turn failed", zap.Error(err))
		n.fail(ctx, claim, err.Error(), log)
		return
	}
	claim.KeepEvents = cmp.Or(setup.recipe.Limits.MaxLogEvents, n.cfg.MaxLogEvents)
	history, omitted, err := n.turnHistory(ctx, claim, kept, setup.contextTokens)
	if err != nil {
		log.Error("reading the history failed; abandoning the turn", zap.Error(err))
		_ = n.store.Release(context.WithoutCancel(ctx), claim)
		return
	}
	claim.History = history
	historyView, viewTokens := n.histories.view(w.PID) // before the turn's events join the kept log
	n.histories.extend(w.PID, lastID(history), claim.Current)
	n.cfg.Metrics.observeClaim(claim)
	if claim.Recovered {
		log.Info("recovering a turn whose node stopped")
	}

	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	n.leases.hold(claim, cancel, log) // a lost lease cancels the turn
	out, err := n.play(turnCtx, claim, setup, historyView, viewTokens, omitted)
	n.leases.drop(claim) // the commit or release ends the lease
	cancel()
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, store.ErrFenced) || store.Unavailable(err) {
			// Stopping, another node took over, or Redis could not take a
			// checkpoint just now: the turn is recovered from its last
			// checkpoint, here or on another node, not failed.
			log.Info("turn abandoned", zap.Error(err))
			n.cfg.Metrics.outcome(claim.Record.Recipe, "abandoned")
			if rerr := n.store.Release(context.WithoutCancel(ctx), claim); rerr != nil && !errors.Is(rerr, store.ErrFenced) {
				log.Warn("release failed", zap.Error(rerr))
			}
			return
		}
		log.Error("turn failed", zap.Error(err))
		n.fail(ctx, claim, err.Error(), log)
		return
	}
	if !out.ResumeAt.IsZero() {
		n.resumeAt(context.WithoutCancel(ctx), claim, out.ResumeAt, log) // as the commit
	}
	notify := n.notifyParent(claim, out)
	rec, err := n.store.Commit(context.WithoutCancel(ctx), claim, out.Pending, out.Next, "engine", notify)
	if err != nil {
		log.Warn("commit failed", zap.Error(err))
		return
	}
	n.keepTurn(claim, rec)
	n.histories.keepRecord(rec)
	n.cfg.Metrics.observeTurn(claim, out)
	if n.cfg.OnCommit != nil {
		n.cfg.OnCommit(rec, out.Events)
	}
}

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

// turnSetup is what a turn of a process runs with: its recipe, model and
// tools, and the most tokens of the conversation a model call is shown.
type turnSetup struct {
	recipe        *recipes.Recipe
	model         llm.Model
	tools         *tools.Registry
	contextTokens int
}

// prepare resolves what a turn of the process rec runs with.
func (n *Node) prepare(rec store.Record) (turnSetup, error) {
	lib := n.library.Load()
	r, err := lib.recipes.Get(rec.Recipe)
	if err != nil {
		return turnSetup{}, err
	}
	model, window, err := n.model(r)
	if err != nil {
		return turnSetup{}, err
	}
	reg, err := lib.tools(r)
	if err != nil {
		return turnSetup{}, err
	}
	// The recipe's own bound wins over its models' windows, which win over
	// the default bound.
	bound := cmp.Or(r.Limits.MaxContextTokens, window, r.Limits.ContextTokens())
	return turnSetup{recipe: r, model: model, tools: reg, contextTokens: bound}, nil
}

// play runs the engine; historyView, when not nil, is the provider view of
// claim.History and viewTokens its conversation.ViewTokens, and omitted says
// it does not start at the beginning of the log. A panic inside becomes an
// error.
func (n *Node) play(ctx context.Context, claim *store.Claim, setup turnSetup, historyView []conversation.Message, viewTokens int, omitted bool) (out chat.Outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			n.log.Error("panic in a turn", zap.String("process", claim.Record.ID), zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			err = fmt.Errorf("internal error: %v", v)
		}
	}()
	rec := claim.Record
	ctx = tools.WithCaller(ctx, tools.Caller{ProcessID: rec.ID, Recipe: rec.Recipe, TurnID: claim.TurnID, Depth: rec.Depth, Owner: rec.Owner})
	return n.engine.Run(ctx, &chat.Turn{
		ID:             claim.TurnID,
		Recipe:         setup.recipe,
		Model:          setup.model,
		Tools:          setup.tools,
		History:        claim.History,
		HistoryView:    historyView,
		HistoryTokens:  viewTokens,
		HistoryOmitted: omitted,
		Current:        claim.Current,
		Worker:         rec.Parent != "",
		ContextTokens:  setup.contextTokens,
		TokensUsed:     rec.Tokens.Input + rec.Tokens.Output,
		TokensToday:    rec.Tokens.On(n.cfg.Clock()),
	}, chat.CheckpointFunc(func(ctx context.Context, evs []conversation.Event) error {
		return n.store.Checkpoint(ctx, claim, evs)
	}))
}

// fail ends the turn FAILED with a notice saying why; a worker's parent is
// told its task failed.
func (n *Node) fail(ctx context.Context, claim *store.Claim, why string, log *zap.Logger) {
	notice := conversation.NewSystemNotice("turn_failed", "The turn failed and the process stopped: "+why+
		". An operator can retry it.")
	notice.At, notice.Turn, notice.By = n.cfg.Clock(), claim.TurnID, "node:"+n.cfg.NodeID
	notify := n.notifyParent(claim, chat.Outcome{Next: lifecycle.Fail, Finish: &tools.FinishArgs{Status: tools.FinishFailed, Result: notice.SystemNotice.Text}})
	rec, err := n.store.Commit(context.WithoutCancel(ctx), claim, []conversation.Event{notice}, lifecycle.Fail, "node:"+n.cfg.NodeID, notify)
	if err != nil {
		log.Warn("commit of the failure failed", zap.Error(err))
		return
	}
	n.keepTurn(claim, rec)
	n.cfg.Metrics.outcome(claim.Record.Recipe, string(lifecycle.Fail))
	if n.cfg.OnCommit != nil {
		n.cfg.OnCommit(rec, []conversation.Event{notice})
	}
}

// resumeAt arms the timer that wakes claim's process at at, when its day's
// token budget (limits.max_tokens_per_day) is back. It is armed before the
// turn's commit, once a day whatever runs the turn again (the timer's id
// derives from the day), so that no crash leaves the process asleep.
func (n *Node) resumeAt(ctx context.Context, claim *store.Claim, at time.Time, log *zap.Logger) {
	c := tools.Caller{ProcessID: claim.Record.ID, CallKey: "day-token-budget/" + at.Format(time.DateOnly)}
	msg := "The day's token budget (limits.max_tokens_per_day) is back: go on where you left off."
	if _, _, err := n.ScheduleWakeup(ctx, c, tools.Wakeup{At: at, Message: msg}); err != nil && !errors.Is(err, tools.ErrWakeupFired) {
		log.Warn("arming the wake for the next day's token budget failed; a message wakes the process", zap.Error(err))
	}
}

// notifyParent returns the message a finished worker sends its parent: a
// conversation.ProcessEvent, with the sources its result rests on.
func (n *Node) notifyParent(claim *store.Claim, out chat.Outcome) *store.Notify {
	rec := claim.Record
	if (out.Next != lifecycle.Finish && out.Next != lifecycle.Fail) || rec.Parent == "" || out.Finish == nil {
		return nil
	}
	report := conversation.ProcessEvent{Child: rec.ID, Recipe: rec.Recipe, Status: out.Finish.Status, Result: out.Finish.Result}
	for _, c := range out.Cited {
		report.Sources = append(report.Sources, c.Source)
	}
	return store.ReportTo(rec.Parent, report)
}

// model resolves a recipe's model, by Config.ResolveModel when set, else
// by Config.Models; each candidate metered under its provider name. With
// model.fallbacks, the candidates are tried in order (llm.Fallback).
// window is the smallest context window the candidates declare
// (llm.Windowed), 0 when none does.
func (n *Node) model(r *recipes.Recipe) (model llm.Model, window int, err error) {
	specs := r.Model.Candidates()
	chain := make([]llm.Candidate, len(specs))
	for i, m := range specs {
		c, w, err := n.candidate(r, m)
		if err != nil {
			return nil, 0, err
		}
		if w > 0 && (window == 0 || w < window) {
			window = w
		}
		chain[i] = llm.Candidate{Model: c, Name: m.Name}
	}
	if len(chain) == 1 {
		return chain[0].Model, window, nil
	}
	return llm.Fallback(chain...), window, nil
}

// candidate resolves one model section of recipe r, metered, its usage
// saying who answered (the model may have said so itself, more precisely:
// brain serve's providers name the provider "default" stands for).
func (n *Node) candidate(r *recipes.Recipe, m recipes.Model) (llm.Model, int, error) {
	p := m.Provider
	if p == "" {
		p = recipes.DefaultProvider
	}
	model, ok := n.cfg.Models[p]
	if n.cfg.ResolveModel != nil {
		var err error
		if model, err = n.cfg.ResolveModel(m); err != nil {
			return nil, 0, fmt.Errorf("recipe %s: %w", r.Name, err)
		}
	} else if !ok {
		return nil, 0, fmt.Errorf("recipe %s: no model for provider %q; configure one", r.Name, p)
	}
	window := 0
	if w, ok := model.(llm.Windowed); ok {
		window = w.ContextTokens()
	}
	return n.cfg.Metrics.meter(p, llm.Answering(p, "", model)), window, nil
}
