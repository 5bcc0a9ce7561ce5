package node

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/live"
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
	start := time.Now()
	claim, err := n.store.ClaimAfter(ctx, w, n.cfg.NodeID, "t_"+rand.Text()[:10], known, kept)
	if errors.Is(err, store.ErrNothingToDo) || errors.Is(err, store.ErrNotFound) {
		return // the store has settled the wake
	}
	if err != nil {
		n.cfg.Metrics.redisError(err)
		log.Warn("claim failed", zap.Error(err))
		return
	}
	ctx, span := n.traceTurn(ctx, claim, start)
	defer span.End()
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
		n.cfg.Metrics.redisError(err)
		turnEnded(ctx, "abandoned", err)
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
	ctl := n.controls.add(w.PID)
	defer n.controls.remove(w.PID, ctl)
	n.leases.hold(claim, cancel, ctl.stop, log) // a lost lease cancels the turn
	out, err := n.play(turnCtx, claim, setup, ctl, historyView, viewTokens, omitted)
	n.leases.drop(claim) // the commit or release ends the lease
	cancel()
	if err != nil {
		n.abandon(ctx, claim, err, log)
		return
	}
	n.commit(ctx, claim, out, log)
}

// abandon ends a turn whose engine returned err. Stopping, another node
// having taken over, or Redis unable to take a checkpoint just now: the
// turn is recovered from its last checkpoint, here or on another node, not
// failed. Anything else fails the process.
func (n *Node) abandon(ctx context.Context, claim *store.Claim, err error, log *zap.Logger) {
	n.cfg.Metrics.redisError(err)
	if ctx.Err() == nil && !errors.Is(err, store.ErrFenced) && !store.Unavailable(err) {
		log.Error("turn failed", zap.Error(err))
		n.fail(ctx, claim, err.Error(), log)
		return
	}
	log.Info("turn abandoned", zap.Error(err))
	turnEnded(ctx, "abandoned", err)
	n.cfg.Metrics.outcome(claim.Record.Recipe, "abandoned")
	if rerr := n.store.Release(context.WithoutCancel(ctx), claim); rerr != nil && !errors.Is(rerr, store.ErrFenced) {
		log.Warn("release failed", zap.Error(rerr))
	}
}

// commit commits the outcome of claim's turn, with the next day's wake of
// a spent day budget and a finished worker's report to its parent, and
// keeps the turn's log.
func (n *Node) commit(ctx context.Context, claim *store.Claim, out engines.Outcome, log *zap.Logger) {
	if !out.ResumeAt.IsZero() {
		n.resumeAt(context.WithoutCancel(ctx), claim, out.ResumeAt, log) // as the commit
	}
	if out.Halted {
		n.goOnAfterHalt(context.WithoutCancel(ctx), claim, log) // as the commit
	}
	n.armTimeouts(context.WithoutCancel(ctx), claim, out.Approvals, log) // as the commit
	notify := n.notifyParent(ctx, claim, out)
	rec, err := n.store.Commit(context.WithoutCancel(ctx), claim, out.Pending, out.Next, "engine", notify, out.Approvals...)
	if err != nil {
		n.cfg.Metrics.redisError(err)
		turnEnded(ctx, "abandoned", err) // recovered from its last checkpoint
		log.Warn("commit failed", zap.Error(err))
		return
	}
	turnEnded(ctx, string(out.Next), nil)
	n.cfg.Metrics.observeApprovals(claim, out)
	n.keepTurn(claim, rec)
	n.histories.keepRecord(rec)
	n.cfg.Metrics.observeTurn(claim, out)
	if n.cfg.OnCommit != nil {
		n.cfg.OnCommit(rec, out.Events)
	}
}

// play runs the engine; historyView, when not nil, is the provider view of
// claim.History and viewTokens its conversation.ViewTokens, and omitted says
// it does not start at the beginning of the log. A panic inside becomes an
// error.
func (n *Node) play(ctx context.Context, claim *store.Claim, setup turnSetup, ctl *control, historyView []conversation.Message, viewTokens int, omitted bool) (out engines.Outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			n.log.Error("panic in a turn", zap.String("process", claim.Record.ID), zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			err = fmt.Errorf("internal error: %v", v)
		}
	}()
	rec := claim.Record
	ctx = tools.WithCaller(ctx, tools.Caller{ProcessID: rec.ID, Recipe: rec.Recipe, TurnID: claim.TurnID, Depth: rec.Depth, Owner: rec.Owner})
	return setup.kind.Engine.Run(ctx, &engines.Turn{
		ID:             claim.TurnID,
		Recipe:         setup.recipe,
		Model:          setup.model,
		Tools:          setup.tools,
		History:        claim.History,
		HistoryView:    historyView,
		HistoryTokens:  viewTokens,
		HistoryOmitted: omitted,
		Current:        claim.Current,
		ContextTokens:  setup.contextTokens,
		TokensUsed:     rec.Tokens.Input + rec.Tokens.Output,
		TokensToday:    rec.Tokens.On(n.cfg.Clock()),
		Approvals:      rec.Approvals,
		Halt:           ctl.halt,
		Interrupt:      ctl.interrupt,
		Progress:       processSink{pid: rec.ID, to: n.live},
		Models:         n.sections(setup.recipe),
	}, &checkpointer{store: n.store, claim: claim, steers: steers(setup.recipe)})
}

// processSink names the process of a turn's live updates, which the
// node's publisher sends to whoever watches it.
type processSink struct {
	pid string
	to  live.Sink
}

func (s processSink) Publish(u live.Update) {
	u.Process = s.pid
	s.to.Publish(u)
}

// checkpointer makes a turn's progress durable in the store, and brings it
// the messages that steer it (engines.Steerer).
type checkpointer struct {
	store  *store.Store
	claim  *store.Claim
	steers []conversation.Kind // the kinds of message that reach the turn while it runs
}

func (c *checkpointer) Checkpoint(ctx context.Context, evs []conversation.Event) error {
	return c.store.Checkpoint(ctx, c.claim, evs)
}

func (c *checkpointer) Steer(ctx context.Context, evs []conversation.Event) ([]conversation.Event, error) {
	return c.store.Steer(ctx, c.claim, evs, c.steers...)
}

// steers returns the kinds of message that reach a running turn of recipe
// rc between its rounds (inbox.Steers): an operator's always, a user's as
// the recipe's steering.user_messages says.
func steers(rc *recipes.Recipe) []conversation.Kind {
	var kinds []conversation.Kind
	for _, k := range []conversation.Kind{conversation.KindOperator, conversation.KindUser} {
		if inbox.Steers(k, rc.Steering.User()) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// goOnAfterHalt leaves in the inbox of claim's process, whose turn a pause
// cut short, the message that makes it go on where it left off once
// resumed (resume judges the inbox: a READY process with a message
// wakes). It is posted before the commit, under a key derived from the
// turn, so that a turn run again posts it once. A process stopped or
// failed refuses it, as it should.
func (n *Node) goOnAfterHalt(ctx context.Context, claim *store.Claim, log *zap.Logger) {
	_, _, err := n.store.Post(ctx, claim.Record.ID, store.Message{Kind: conversation.KindSystem, From: "system", At: n.cfg.Clock(),
		Content:        "Your turn was cut short when the process was paused; it has been resumed. Go on where you left off.",
		IdempotencyKey: "halt/" + claim.TurnID})
	if err != nil && !errors.Is(err, store.ErrClosed) {
		log.Warn("leaving the message that resumes a paused turn failed; a message wakes the process once resumed", zap.Error(err))
	}
}

// fail ends the turn FAILED with a notice saying why; a worker's parent is
// told its task failed.
func (n *Node) fail(ctx context.Context, claim *store.Claim, why string, log *zap.Logger) {
	notice := conversation.NewSystemNotice("turn_failed", "The turn failed and the process stopped: "+why+
		". An operator can retry it.")
	notice.At, notice.Turn, notice.By = n.cfg.Clock(), claim.TurnID, "node:"+n.cfg.NodeID
	notify := n.notifyParent(ctx, claim, engines.Outcome{Next: lifecycle.Fail, Finish: &tools.FinishArgs{Status: tools.FinishFailed, Result: notice.SystemNotice.Text}})
	rec, err := n.store.Commit(context.WithoutCancel(ctx), claim, []conversation.Event{notice}, lifecycle.Fail, "node:"+n.cfg.NodeID, notify)
	if err != nil {
		n.cfg.Metrics.redisError(err)
		turnEnded(ctx, "abandoned", err)
		log.Warn("commit of the failure failed", zap.Error(err))
		return
	}
	turnEnded(ctx, string(lifecycle.Fail), errors.New(why))
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

// armTimeouts arms, for each call waiting for approval with a deadline,
// the timer that rejects it then unless it was decided (inbox.Timer's
// Decision). Like resumeAt it is armed before the commit, under an id
// derived from the call, so that no crash leaves a call waiting past its
// deadline and a turn run again arms it once.
func (n *Node) armTimeouts(ctx context.Context, claim *store.Claim, calls []conversation.PendingCall, log *zap.Logger) {
	for _, c := range calls {
		if c.Deadline == nil {
			continue
		}
		reason := "not approved within " + shortDuration(c.Deadline.Sub(c.Requested))
		t, err := inbox.Arm(inbox.Timer{PID: claim.Record.ID, At: *c.Deadline,
			Decision: &conversation.ApprovalDecision{CallID: c.CallID, Decision: conversation.Reject, Reason: reason}}, "approval/"+c.CallID, n.cfg.Clock())
		if err == nil {
			err = n.store.PutTimer(ctx, t)
		}
		if err != nil {
			log.Warn("arming an approval's timeout failed; the call waits until a person decides", zap.String("call", c.CallID), zap.Error(err))
		}
	}
}

// notifyParent returns the message a finished worker sends its parent: a
// conversation.ProcessEvent, with the sources its result rests on, from
// the span of the turn in ctx (the parent's turn that drains it links to
// it).
func (n *Node) notifyParent(ctx context.Context, claim *store.Claim, out engines.Outcome) *store.Notify {
	rec := claim.Record
	if (out.Next != lifecycle.Finish && out.Next != lifecycle.Fail) || rec.Parent == "" || out.Finish == nil {
		return nil
	}
	report := conversation.ProcessEvent{Child: rec.ID, Recipe: rec.Recipe, Status: out.Finish.Status, Result: out.Finish.Result, Data: out.Finish.Data}
	for _, c := range out.Cited {
		report.Sources = append(report.Sources, c.Source)
	}
	notify := store.ReportTo(rec.Parent, report)
	notify.Message.TraceParent = traceParent(ctx)
	return notify
}

// shortDuration writes d as a person would: 1h, 1h30m, 45s, not 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
