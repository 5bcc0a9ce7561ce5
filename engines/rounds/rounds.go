package rounds

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/validators"
)

// Codes of the system notices a turn can end with.
const (
	NoticeMaxRounds   = "max_rounds"
	NoticeTimeout     = "turn_timeout"
	NoticeModelError  = "model_error"
	NoticeEmptyAnswer = "empty_answer"
	NoticeModelAuth   = "model_auth"
	// NoticeModelPayload: the conversation holds provider data its
	// provider's adapter cannot send back (llm.ErrPayload).
	NoticeModelPayload = "model_payload"
	NoticeTokenBudget  = "token_budget"
	// NoticeDayTokenBudget: the day's tokens (limits.max_tokens_per_day)
	// are used; the process goes on the next UTC day.
	NoticeDayTokenBudget = "day_token_budget"
)

// MaxCutRetries bounds how often one turn asks a round again after the
// model's answer was cut midway.
const MaxCutRetries = 2

// MaxContextShrinks bounds how often one turn asks a round again, showing
// the model half as much, after the provider refused the conversation as
// too long for the model's context window.
const MaxContextShrinks = 3

// Who caused the events the engine writes (Event.By).
const (
	byEngine = "engine"
	byModel  = "model"
)

// Run plays one turn, or resumes one: t.Current holds what the turn has
// already committed. c says how the turn ends; clock stamps its events
// (time.Now when nil). It returns an error only when a checkpoint fails; a
// failing model, a bad tool call or a spent budget end the turn with a
// system notice instead.
func Run(ctx context.Context, t *engines.Turn, cp engines.Checkpointer, c Contract, clock func() time.Time) (engines.Outcome, error) {
	if clock == nil {
		clock = time.Now
	}
	r := newRun(t, cp, c, clock)
	toolCtx := ctx
	if d := t.Recipe.Limits.Timeout(); d > 0 {
		var cancel context.CancelFunc
		toolCtx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	r.resume(ctx, toolCtx)
	if r.err == nil && r.approvals == nil && len(t.Approvals) > 0 {
		r.settle(ctx, toolCtx)
	}
	if r.err == nil && r.ended != nil { // the contract ended the turn on a decision (Decider)
		return r.outcome(*r.ended), nil
	}
	if r.err == nil && r.approvals != nil { // calls wait for a person: no model call before they are decided
		return r.outcome(lifecycle.AwaitUser), nil
	}
	for r.err == nil {
		if r.halted() {
			return r.outcome(r.halt()), nil
		}
		if limit := t.Recipe.Limits.MaxTokens; limit > 0 && r.tokens >= limit {
			return r.outcome(r.spent(limit)), nil
		}
		if limit := t.Recipe.Limits.MaxTokensPerDay; limit > 0 && r.today >= limit {
			return r.outcome(r.spentToday(limit)), nil
		}
		if r.rounds >= t.Recipe.Limits.Rounds() {
			r.add(byEngine, conversation.NewSystemNotice(NoticeMaxRounds, fmt.Sprintf(
				"The turn was stopped after %d model calls (limits.max_rounds). Send a message to continue.",
				t.Recipe.Limits.Rounds())))
			return r.outcome(r.idle()), nil
		}
		r.rounds++
		next, done := r.round(ctx, toolCtx)
		if r.err != nil {
			break
		}
		if done {
			return r.outcome(next), nil
		}
		r.steer(ctx)
	}
	return engines.Outcome{}, r.err
}

// run is the state of one turn.
type run struct {
	t           *engines.Turn
	cp          engines.Checkpointer
	c           Contract
	now         func() time.Time
	terminal    string // the tool that ends the turn; "": free text does (natural mode)
	system      string // the system prompt: the recipe's, then the contract's (engines.System)
	budget      int
	corrections int
	rounds      int
	spawned     int       // spawn_worker calls that started a worker this turn
	cuts        int       // rounds asked again after their answer was cut
	fitted      int       // rounds whose view was cut to limits.max_context_tokens
	window      int       // the most tokens a model call is shown (conversation.Fit)
	tokens      int64     // what the process's model calls have used, this turn's included
	today       int64     // what they have used today (UTC), this turn's included
	resumeAt    time.Time // Outcome.ResumeAt
	tooLong     int       // model calls the provider refused as too long
	shrunk      int       // times window was halved after such a refusal
	validators  []validators.Validator
	defs        []llm.ToolDef
	err         error // a failed checkpoint: the turn is abandoned
	finish      *tools.FinishArgs
	approvals   []conversation.PendingCall // the calls the turn ends waiting for (see approvals.go)
	halts       bool                       // the turn was halted (Outcome.Halted)
	ended       *lifecycle.Event           // the turn's end, when the contract decided it on an approval (Decider)
	also        map[string]string          // further ending tools and their not-alone errors (Endings)
	decider     Decider                    // the contract, when its ending call may wait for approval

	// turn is this turn's events: t.Current, then what it adds. The
	// history is not copied in: a turn costs what it adds, not the length
	// of the conversation (see view).
	turn      []conversation.Event
	committed int // how many of this turn's events a checkpoint has seen
	// shown is what the model was last shown: the view of the history
	// and of turn's first viewed events (see view), and its size
	// (conversation.ViewTokens), counted as it grows.
	shown       []conversation.Message
	viewed      int
	shownTokens int
}

func newRun(t *engines.Turn, cp engines.Checkpointer, c Contract, clock func() time.Time) *run {
	rc := t.Recipe
	r := &run{
		t:         t,
		cp:        cp,
		c:         c,
		now:       clock,
		budget:    rc.Validation.Corrections(),
		committed: len(t.Current),
		window:    contextTokens(t),
	}
	in, out := conversation.TokensUsed(t.Current) // an interrupted turn's calls
	r.tokens = t.TokensUsed + in + out
	r.today = t.TokensToday + in + out
	var checks []validators.Validator
	r.terminal, checks = c.Ending(rc, t.Tools)
	r.decider, _ = c.(Decider)
	if more, ok := c.(Endings); ok && r.terminal != "" {
		r.also = more.Also(rc, t.Tools)
	}
	r.turn = append(make([]conversation.Event, 0, len(t.Current)+8), t.Current...)
	r.system = engines.System(rc, c.Terms(rc))
	if rc.ValidationOn() && r.terminal != "" {
		r.validators = checks
	}
	for _, d := range t.Tools.Definitions() {
		r.defs = append(r.defs, llm.ToolDef{Name: d.Name, Description: d.Description, Schema: d.Schema})
	}
	return r
}

// resume picks up the counts of what the turn has committed so far and
// answers the tool calls that a stopped node left without a result: a
// tool's result, once committed, is never run again; a call without one
// is run again when its tool is idempotent (under the same call key, so it
// finds what the first run did), and otherwise may or may not have run,
// which the model is told.
func (r *run) resume(ctx, toolCtx context.Context) {
	answered := make(map[string]bool)
	for _, e := range r.t.Current {
		switch {
		case e.ValidationCorrection != nil:
			r.corrections++
		case e.ToolCallResponse != nil:
			answered[e.ToolCallResponse.CallID] = true
			if e.ToolCallResponse.Name == tools.SpawnWorker && !e.ToolCallResponse.IsError {
				r.spawned++
			}
		}
	}
	for _, m := range conversation.ProviderView(r.t.Current) {
		if m.Role == conversation.MessageAssistant {
			r.rounds++
		}
	}
	orphans, requests := false, 0
	var waiting []conversation.PendingCall
	for _, e := range r.t.Current {
		c := e.ToolCallRequest
		if c == nil {
			continue
		}
		requests++
		if answered[c.CallID] {
			continue
		}
		call := conversation.ToolCall{ID: c.CallID, Name: c.Name, Arguments: c.Arguments}
		if a, ok := r.t.Tools.Approval(c.Name); ok && c.Name != r.terminal { // never run: it waits for a person
			waiting = append(waiting, r.pending(call, requests-1, a))
			continue
		}
		orphans = true
		switch {
		case c.Name == r.terminal:
			// A checkpointed turn-ending call came with other calls: refused.
			r.result(call, tools.ErrorResult("%s", r.notAloneError()))
		case r.t.Tools.Idempotent(c.Name):
			r.call(toolCtx, call, r.callKey(requests-1))
		default:
			r.result(call, tools.ErrorResult("%s", OrphanedCallError))
		}
	}
	if orphans {
		r.save(ctx)
	}
	if len(waiting) > 0 {
		r.await(waiting)
	}
}

// OrphanedCallError is the result of a tool call whose node stopped before
// the result was saved.
const OrphanedCallError = "The node running this tool stopped before its result was saved: " +
	"the tool may or may not have run. Check its effect before calling it again."

// add stamps ev as part of this turn and appends it.
func (r *run) add(by string, ev conversation.Event) {
	ev.At = r.now()
	ev.Turn = r.t.ID
	ev.By = by
	r.turn = append(r.turn, ev)
}

// view is what the model is shown: the provider view of the history and
// this turn's events. A turn copies the view of the history once and
// appends each round's events to its copy, so a round costs what it adds,
// not the length of the conversation; and only ever appends, so what an
// earlier call was shown is never written again. Without a view of the
// history given, or when events cannot be appended (see
// conversation.ProviderViewAppend), the whole conversation is viewed.
func (r *run) view() []conversation.Message {
	if hv := r.t.HistoryView; r.shown == nil && hv != nil {
		r.shown = append(make([]conversation.Message, 0, len(hv)+2*len(r.turn)+8), hv...)
		r.shownTokens = r.t.HistoryTokens
		if r.shownTokens == 0 {
			r.shownTokens = conversation.ViewTokens(hv)
		}
	}
	var msgs []conversation.Message
	ok := false
	if r.shown != nil {
		msgs, ok = conversation.ProviderViewAppend(r.shown, r.turn[r.viewed:])
	}
	if ok {
		r.shownTokens += conversation.ViewTokens(msgs[len(r.shown):])
	} else {
		all := append(append(make([]conversation.Event, 0, len(r.t.History)+len(r.turn)), r.t.History...), r.turn...)
		msgs = conversation.ProviderView(all)
		r.shownTokens = conversation.ViewTokens(msgs)
	}
	if r.t.HistoryOmitted && conversation.NoteOmitted(msgs) { // once: msgs is the turn's own, and kept
		r.shownTokens += conversation.OmittedNoteTokens
	}
	r.shown, r.viewed = msgs, len(r.turn)
	return msgs[:len(msgs):len(msgs)]
}

// save checkpoints the events added since the last checkpoint. A failure is
// kept in r.err, which ends the turn.
func (r *run) save(ctx context.Context) bool {
	if r.err != nil {
		return false
	}
	evs := r.turn
	if r.committed == len(evs) {
		return true
	}
	if err := r.cp.Checkpoint(ctx, evs[r.committed:]); err != nil {
		r.err = fmt.Errorf("chat: turn %s: checkpoint: %w", r.t.ID, err)
		return false
	}
	r.committed = len(evs)
	return true
}

func (r *run) outcome(next lifecycle.Event) engines.Outcome {
	evs := r.turn
	out := engines.Outcome{Events: evs, Pending: evs[r.committed:], Next: next, Finish: r.finish, Rounds: r.rounds, Fitted: r.fitted, TooLong: r.tooLong,
		ResumeAt: r.resumeAt, Approvals: r.approvals, Halted: r.halts}
	if r.finish != nil {
		out.Cited = r.citations()
	}
	return out
}

// idle is the lifecycle event of a turn that ends without a reply that says
// what comes next (the contract's Idle).
func (r *run) idle() lifecycle.Event { return r.c.Idle() }

// reportFailure notes text as the failed task's result when the contract
// reports failures to a parent.
func (r *run) reportFailure(text string) {
	if r.c.Reports() {
		r.finish = &tools.FinishArgs{Result: text, Status: tools.FinishFailed}
	}
}

// round makes one model call and acts on the answer. done reports that the
// turn ends with the lifecycle event next. ctx bounds checkpoints, toolCtx
// (ctx with the turn's timeout) the model and the tools.
func (r *run) round(ctx, toolCtx context.Context) (next lifecycle.Event, done bool) {
	msgs, fit := r.view(), conversation.Fitting{}
	if r.shownTokens > r.window && r.window > 0 { // (Fit would count them all again to find it fits)
		msgs, fit = conversation.Fit(msgs, r.window)
	}
	if fit.Fitted() {
		r.fitted++
	}
	req := &llm.Request{
		System:   r.system,
		Messages: msgs,
		Tools:    r.defs,
		Params: llm.Params{
			Model:       r.t.Recipe.Model.Name,
			Temperature: r.t.Recipe.Model.Temperature,
			HostedTools: r.t.Recipe.Model.HostedTools,
		},
	}
	if mt := r.t.Recipe.Model.MaxTokens; mt != nil {
		req.Params.MaxTokens = *mt
	}
	resp, err, cause := r.generate(toolCtx, req)
	r.observed(req, &resp, fit)
	if err != nil && ctx.Err() != nil {
		// The turn itself ends (its node stops, or lost the lease): no
		// answer to give, the turn is recovered from its last checkpoint.
		r.err = fmt.Errorf("chat: turn %s: %w", r.t.ID, context.Cause(ctx))
		return "", false
	}
	if err != nil {
		if next, done, ok := r.cutShort(cause, &resp); ok {
			return next, done
		}
		if r.shrink(err, msgs) {
			return "", false
		}
		return r.failed(ctx, toolCtx, &resp, err)
	}
	for _, rs := range resp.Reasoning {
		r.add(byModel, conversation.NewReasoning(rs.Text, rs.Signature, rs.Payload))
	}
	if resp.Empty() {
		return r.empty()
	}
	if r.terminal == "" {
		return r.natural(ctx, toolCtx, &resp)
	}
	return r.ending(ctx, toolCtx, &resp)
}

// generate makes the model call of req, which a halt or an interrupt cuts
// short (cause says which; see cut).
func (r *run) generate(ctx context.Context, req *llm.Request) (resp llm.Response, err, cause error) {
	ctx, stop := r.cut(ctx, true)
	defer stop()
	resp, err = llm.Collect(r.streamed(r.t.Model.Generate(ctx, req)))
	return resp, err, context.Cause(ctx)
}

// contextTokens is the turn's bound on what a model call is shown.
func contextTokens(t *engines.Turn) int {
	if t.ContextTokens > 0 {
		return t.ContextTokens
	}
	return t.Recipe.Limits.ContextTokens()
}

// shrink handles a model call that err says the provider refused because
// refused, the view it was shown, exceeds the model's context window: the
// bound on what the model is shown becomes half of refused's size for the
// rest of the turn, and the round is asked again, up to MaxContextShrinks
// times a turn, while that leaves something more out. The estimate of a
// view is a guess, and so is the window a recipe or a provider declares;
// the provider's refusal is not.
func (r *run) shrink(err error, refused []conversation.Message) bool {
	if !errors.Is(err, llm.ErrContextTooLong) {
		return false
	}
	r.tooLong++
	if r.shrunk >= MaxContextShrinks {
		return false
	}
	size := conversation.ViewTokens(refused)
	half := max(size/2, 1)
	if next, _ := conversation.Fit(r.view(), half); conversation.ViewTokens(next) >= size {
		return false // nothing older is left to leave out
	}
	r.shrunk++
	r.window = half
	return true
}

// observed records what the model call reported beside its answer: its
// token usage, with what fit left out of the conversation it was shown,
// and the states of the work its provider ran itself.
func (r *run) observed(req *llm.Request, resp *llm.Response, fit conversation.Fitting) {
	if u := resp.Usage; u.InputTokens > 0 || u.OutputTokens > 0 {
		r.tokens += int64(u.InputTokens + u.OutputTokens)
		r.today += int64(u.InputTokens + u.OutputTokens)
		model := u.Model
		if u.Provider == "" { // the model did not say who answered: the one asked
			model = req.Params.Model
		}
		r.add(byModel, conversation.NewModelUsage(conversation.ModelUsage{
			Provider: u.Provider, Model: model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			ClearedResults: fit.Cleared, DroppedMessages: fit.Dropped,
		}))
	}
	for _, h := range resp.Hosted {
		r.add(byModel, conversation.NewHostedActivity(h))
	}
}

// spentToday ends a turn of a process whose model calls have used limit
// tokens today, its recipe's limits.max_tokens_per_day: it makes no more
// calls and says so, and the process stays READY, for the caller to wake
// it when the next UTC day begins (Outcome.ResumeAt). A process that lives
// for long must not fail on a budget that comes back.
func (r *run) spentToday(limit int64) lifecycle.Event {
	now := r.now().UTC()
	r.resumeAt = time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	r.add(byEngine, conversation.NewSystemNotice(NoticeDayTokenBudget, fmt.Sprintf(
		"This process has used %d tokens today, its recipe's limits.max_tokens_per_day (%d): it makes no more model calls "+
			"until the day ends (%s), when it goes on by itself.", r.today, limit, r.resumeAt.Format(time.RFC3339))))
	return lifecycle.Continue
}

// spent ends a process whose model calls have used limit tokens, its
// recipe's limits.max_tokens: it fails, with a notice saying so (a
// worker's parent is told), so that no more calls are billed until an
// operator raises the limit and retries it.
func (r *run) spent(limit int64) lifecycle.Event {
	text := fmt.Sprintf("This process has used %d tokens of its model, its recipe's limits.max_tokens (%d): it makes no more model calls. "+
		"Raise the limit, then retry the process.", r.tokens, limit)
	r.add(byEngine, conversation.NewSystemNotice(NoticeTokenBudget, text))
	r.reportFailure(text)
	return lifecycle.Fail
}

// failed handles a model call that failed after its adapter's retries.
// What the model wrote before the failure is kept for it, with the
// citations that arrived (marked incomplete). An answer cut midway is asked
// again, up to MaxCutRetries times a turn. A refused key cannot heal by
// itself: the process fails, for an operator to fix the key and retry; so
// does a conversation holding provider data its adapter cannot send back.
// Anything else ends the turn, waiting for the next message.
func (r *run) failed(ctx, toolCtx context.Context, resp *llm.Response, err error) (lifecycle.Event, bool) {
	r.keepPartial(resp)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && toolCtx.Err() != nil && ctx.Err() == nil:
		r.add(byEngine, conversation.NewSystemNotice(NoticeTimeout, fmt.Sprintf(
			"The turn was stopped after %s (limits.turn_timeout). Send a message to continue.",
			r.t.Recipe.Limits.Timeout())))
	case errors.Is(err, llm.ErrUnavailable) && resp.Started() && ctx.Err() == nil && toolCtx.Err() == nil && r.cuts < MaxCutRetries:
		// An adapter retries a failure before any output itself; an answer
		// cut midway is asked again here, from the start of the round, with
		// what arrived of it kept above for the model to go on from.
		r.cuts++
		return "", false
	case errors.Is(err, llm.ErrAuth):
		text := "The model provider refused the credentials: " + err.Error() +
			". Fix the provider's API key on the server, then retry the process."
		r.add(byEngine, conversation.NewSystemNotice(NoticeModelAuth, text))
		r.reportFailure(text)
		return lifecycle.Fail, true
	case errors.Is(err, llm.ErrPayload):
		text := "The conversation holds data of the model's provider that this server cannot send back to it: " + err.Error() +
			". Move the recipe to another provider (or give it a fallback), or run a version of brain that continues it, then retry the process."
		r.add(byEngine, conversation.NewSystemNotice(NoticeModelPayload, text))
		r.reportFailure(text)
		return lifecycle.Fail, true
	case errors.Is(err, llm.ErrContextTooLong):
		r.add(byEngine, conversation.NewSystemNotice(NoticeModelError, "The conversation is too long for the model's context window, "+
			"even with older parts left out ("+err.Error()+"). Send a shorter message or use a model with a larger window; "+
			"limits.max_context_tokens (or the provider's max_context_tokens) should be below the window."))
	default:
		r.add(byEngine, conversation.NewSystemNotice(NoticeModelError, "The model call failed: "+err.Error()))
	}
	return r.idle(), true
}

// keepPartial keeps what the model wrote of an answer cut short (a failed
// or cut call) for the model alone, with the citations that arrived.
func (r *run) keepPartial(resp *llm.Response) {
	if resp.Text == "" {
		return
	}
	partial := conversation.NewChatMessage(resp.Text, resp.Citations...)
	partial.ChatResponse.Audience = []conversation.Role{conversation.RoleAssistant}
	r.add(byModel, partial)
}

// citations returns the sources of what this turn's answer rests on, in
// the order the turn met them, each once: those the model's text cited
// (without ranges: they addressed that text, not the answer the turn
// delivers) and those of the workers' results the turn drained.
func (r *run) citations() []conversation.Citation {
	var out []conversation.Citation
	seen := make(map[conversation.Source]bool)
	add := func(ct conversation.Citation) {
		if !seen[ct.Source] {
			seen[ct.Source] = true
			ct.Range = nil
			out = append(out, ct)
		}
	}
	for _, e := range r.turn {
		if c := e.ChatResponse; c != nil {
			for _, ct := range c.Citations {
				add(ct)
			}
		}
		if m := e.InboxMessage; m != nil {
			pe, _ := m.ProcessEvent()
			for _, src := range pe.Sources {
				add(conversation.Citation{Source: src})
			}
		}
	}
	return out
}

// empty handles an answer with neither text nor a tool call: it is asked
// again at once, within the correction budget, with no back-off.
func (r *run) empty() (lifecycle.Event, bool) {
	if r.corrections < r.budget {
		// With validation on, no_tool_call fires (there is no tool call)
		// and its correction goes with the retry; without, the same request
		// is simply asked again.
		if c, ok := r.check(&validators.Answer{}); ok {
			r.correct(c, "")
		} else {
			r.corrections++
		}
		return "", false
	}
	r.add(byEngine, conversation.NewSystemNotice(NoticeEmptyAnswer, fmt.Sprintf(
		"The model gave an empty answer %d times; the turn ended. Send a message to try again.", r.corrections+1)))
	return r.idle(), true
}

// natural handles an answer in legacy mode: text alone ends the turn.
func (r *run) natural(ctx, toolCtx context.Context, resp *llm.Response) (lifecycle.Event, bool) {
	if resp.Text != "" {
		r.add(byModel, conversation.NewChatMessage(resp.Text, resp.Citations...))
	}
	if len(resp.ToolCalls) == 0 {
		return r.c.Answer(&Ending{r}, resp.Text, true)
	}
	return r.runCalls(ctx, toolCtx, resp.ToolCalls)
}

// runCalls records the calls of one answer and runs them in order. When a
// call may have effects outside the log, the requests and then every result
// are made durable one by one, so that a node that stops midway never runs a
// finished tool twice and reports an unfinished one as such; when every call
// is replayable (harmless to run again), all of it is saved in one step. A
// turn-ending call among others is refused: the model must answer once it
// has seen their results. A call that needs a person's approval, with
// arguments its tool takes, does not run: the turn ends with the lifecycle
// event that waits for them (done), once the others ran.
func (r *run) runCalls(ctx, toolCtx context.Context, calls []conversation.ToolCall) (next lifecycle.Event, done bool) {
	first := r.requests()
	for _, c := range calls {
		r.add(byModel, conversation.NewToolCallRequest(c.ID, c.Name, c.Arguments))
	}
	stepwise := !r.t.Tools.Replayable(calls)
	if stepwise && !r.save(ctx) {
		return "", false
	}
	var waiting []conversation.PendingCall
	for i, c := range calls {
		if r.halted() {
			for _, w := range waiting {
				r.skip([]conversation.ToolCall{{ID: w.CallID, Name: w.Name, Arguments: w.Arguments}})
			}
			r.skip(calls[i:])
			r.save(ctx)
			return r.halt(), true
		}
		a, gated := r.t.Tools.Approval(c.Name)
		switch {
		case c.Name == r.terminal:
			r.result(c, tools.ErrorResult("%s", r.notAloneError()))
		case r.also[c.Name] != "":
			r.result(c, tools.ErrorResult("%s", r.also[c.Name]))
		case gated && r.t.Tools.Check(c) == nil: // a call it could not run is answered now, not put to a person
			waiting = append(waiting, r.pending(c, first+i, a))
			continue
		default:
			r.call(toolCtx, c, r.callKey(first+i))
		}
		if stepwise && !r.save(ctx) {
			return "", false
		}
	}
	if len(waiting) > 0 {
		r.await(waiting)
		return lifecycle.AwaitUser, true
	}
	return "", false
}

func (r *run) notAloneError() string { return r.c.NotAlone() }

// ending handles an answer when turns end with a turn-ending tool
// (respond, or finish_task for workers).
func (r *run) ending(ctx, toolCtx context.Context, resp *llm.Response) (lifecycle.Event, bool) {
	if resp.Text != "" {
		// Free text beside tools is the model thinking aloud, not the
		// reply: the reply goes through the turn-ending tool.
		aside := conversation.NewChatMessage(resp.Text, resp.Citations...)
		aside.ChatResponse.Audience = []conversation.Role{conversation.RoleAssistant}
		r.add(byModel, aside)
	}
	if len(resp.ToolCalls) == 0 {
		if c, ok := r.check(&validators.Answer{Text: resp.Text}); ok {
			r.correct(c, "")
			return "", false
		}
		return r.fallback(resp.Text)
	}
	if name := resp.ToolCalls[0].Name; len(resp.ToolCalls) > 1 || (name != r.terminal && r.also[name] == "") {
		return r.runCalls(ctx, toolCtx, resp.ToolCalls)
	}
	c := resp.ToolCalls[0]
	r.add(byModel, conversation.NewToolCallRequest(c.ID, c.Name, c.Arguments))
	if err := r.t.Tools.Check(c); err != nil {
		r.result(c, tools.ErrorResult("%s", err.Error()))
		return "", false
	}
	_, span := startTool(toolCtx, c) // the contract acts on the call in the turn itself
	defer span.End()
	return r.c.End(&Ending{r}, c, resp.Text)
}

// delivered is the result event of the turn's answer (respond's result, or
// a worker's finish_task result), carrying the sources it rests on.
func (r *run) delivered(c conversation.ToolCall, res tools.Result) conversation.Event {
	ev := conversation.NewToolCallResponse(c.ID, c.Name, res.Content, res.IsError)
	ev.ToolCallResponse.Citations = r.citations()
	return ev
}

// fallback ends a turn whose model answered in free text once the
// corrections are spent (or validation is off): the legacy behaviour, as
// the contract delivers the text.
func (r *run) fallback(text string) (lifecycle.Event, bool) {
	return r.c.Answer(&Ending{r}, text, false)
}

// check runs the validators on a while the correction budget lasts and
// counts the correction it returns.
func (r *run) check(a *validators.Answer) (validators.Correction, bool) {
	if r.corrections >= r.budget {
		return validators.Correction{}, false
	}
	a.Turn = r.turn
	for _, v := range r.validators {
		if c, ok := v.Check(a); ok {
			r.corrections++
			return c, true
		}
	}
	return validators.Correction{}, false
}

// correct records correction c. callID names the tool call whose error
// result carried it to the model, if any.
func (r *run) correct(c validators.Correction, callID string) {
	ev := conversation.NewValidationCorrection(c.Validator, r.corrections, c.Text)
	ev.ValidationCorrection.CallID = callID
	r.add("validator:"+c.Validator, ev)
}

// requests counts the tool call requests of the turn so far (r.turn
// begins with t.Current).
func (r *run) requests() int {
	n := 0
	for i := range r.turn {
		if r.turn[i].ToolCallRequest != nil {
			n++
		}
	}
	return n
}

// callKey is the tools.Caller.CallKey of the turn's n-th tool call request
// (from 0): the same when a resumed turn runs the call again, since no
// other writer adds requests to a turn (provider call ids may repeat from
// one round to the next).
func (r *run) callKey(n int) string { return r.t.ID + "/" + strconv.Itoa(n) }

// call runs tool call c through the registry, with key as its
// tools.Caller.CallKey, and records its result.
func (r *run) call(ctx context.Context, c conversation.ToolCall, key string) {
	if caller, ok := tools.CallerFrom(ctx); ok {
		caller.CallKey = key
		ctx = tools.WithCaller(ctx, caller)
	}
	if c.Name == tools.SpawnWorker {
		if max := r.t.Recipe.Limits.Workers(); r.spawned >= max {
			r.result(c, tools.ErrorResult("spawn_worker refused: this turn already started %d workers, "+
				"the most limits.max_workers allows; wait for their results", max))
			return
		}
	}
	if r.t.Tools.Replayable([]conversation.ToolCall{c}) { // harmless to run again: a halt cancels it
		var stop func()
		ctx, stop = r.cut(ctx, false)
		defer stop()
	}
	ctx, span := startTool(ctx, c)
	finished := r.running(c)
	res := r.t.Tools.Call(ctx, c)
	finished(res)
	endTool(span, res)
	if c.Name == tools.SpawnWorker && !res.IsError {
		r.spawned++
	}
	r.result(c, res)
}

// result records the result of tool call c and, after it, the
// presentation a successful result carries for the user.
func (r *run) result(c conversation.ToolCall, res tools.Result) {
	r.add("tool:"+c.Name, conversation.NewToolCallResponse(c.ID, c.Name, res.Content, res.IsError))
	if res.Presentation != nil && !res.IsError {
		p := *res.Presentation
		p.CallID = c.ID
		r.add("tool:"+c.Name, conversation.Event{Type: conversation.TypePresentation, Presentation: &p})
	}
}
