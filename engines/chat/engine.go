package chat

import (
	"context"
	"errors"
	"fmt"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/validators"
)

// Codes of the system notices a turn can end with.
const (
	NoticeMaxRounds   = "max_rounds"
	NoticeTimeout     = "turn_timeout"
	NoticeModelError  = "model_error"
	NoticeEmptyAnswer = "empty_answer"
)

// Who caused the events the engine writes (Event.By).
const (
	byEngine = "engine"
	byModel  = "model"
)

// Run plays one turn. It returns an error only when a checkpoint fails; a
// failing model, a bad tool call or a spent budget end the turn with a
// system notice instead.
func (e *Engine) Run(ctx context.Context, t *Turn, cp Checkpointer) (Outcome, error) {
	r := newRun(e, t)
	r.add(byEngine, conversation.NewTurnStart(t.Reason))
	r.all = append(r.all, t.Inbox...)
	if err := r.checkpoint(ctx, cp); err != nil {
		return Outcome{}, err
	}

	modelCtx := ctx
	if d := t.Recipe.Limits.Timeout(); d > 0 {
		var cancel context.CancelFunc
		modelCtx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	for round := 1; ; round++ {
		if round > t.Recipe.Limits.Rounds() {
			r.add(byEngine, conversation.NewSystemNotice(NoticeMaxRounds, fmt.Sprintf(
				"The turn was stopped after %d model calls (limits.max_rounds). Send a message to continue.",
				t.Recipe.Limits.Rounds())))
			return r.outcome(lifecycle.AwaitUser), nil
		}
		next, done := r.round(modelCtx)
		if done {
			return r.outcome(next), nil
		}
		if err := r.checkpoint(ctx, cp); err != nil {
			return Outcome{}, err
		}
	}
}

// run is the state of one turn.
type run struct {
	e           *Engine
	t           *Turn
	respondMode bool
	validate    bool
	budget      int
	corrections int
	validators  []validators.Validator
	defs        []llm.ToolDef

	// all is the history followed by this turn's events, which is what the
	// model is shown; built once per turn, appended to, never copied again.
	all       []conversation.Event
	history   int // len(t.History): where this turn's events start in all
	committed int // how many of this turn's events a checkpoint has seen
}

func newRun(e *Engine, t *Turn) *run {
	rc := t.Recipe
	r := &run{
		e:           e,
		t:           t,
		respondMode: rc.TurnEndMode() == recipes.TurnEndRespond && t.Tools.Has(tools.Respond),
		validate:    rc.Validation.Enabled,
		budget:      rc.Validation.Corrections(),
		history:     len(t.History),
	}
	r.all = append(make([]conversation.Event, 0, len(t.History)+len(t.Inbox)+8), t.History...)
	if r.validate && r.respondMode {
		r.validators = []validators.Validator{
			validators.NoToolCall{Correction: rc.Validation.NoToolCall.Correction},
			validators.DataRelay{
				MinToolResultChars: rc.Validation.DataRelay.MinToolResult(),
				MaxReplyChars:      rc.Validation.DataRelay.MaxReply(),
				Correction:         rc.Validation.DataRelay.Correction,
			},
		}
	}
	for _, d := range t.Tools.Definitions() {
		r.defs = append(r.defs, llm.ToolDef{Name: d.Name, Description: d.Description, Schema: d.Schema})
	}
	return r
}

// add stamps ev as part of this turn and appends it.
func (r *run) add(by string, ev conversation.Event) {
	ev.At = r.e.now()
	ev.Turn = r.t.ID
	ev.By = by
	r.all = append(r.all, ev)
}

// events returns this turn's events so far.
func (r *run) events() []conversation.Event { return r.all[r.history:] }

func (r *run) checkpoint(ctx context.Context, cp Checkpointer) error {
	if err := cp.Checkpoint(ctx, r.events()[r.committed:]); err != nil {
		return fmt.Errorf("chat: turn %s: checkpoint: %w", r.t.ID, err)
	}
	r.committed = len(r.events())
	return nil
}

func (r *run) outcome(next lifecycle.Event) Outcome {
	evs := r.events()
	return Outcome{Events: evs, Pending: evs[r.committed:], Next: next}
}

// idle is the lifecycle event of a turn that ends without a reply that says
// what comes next: a person is waited for, a worker keeps going.
func (r *run) idle() lifecycle.Event {
	if r.t.Worker {
		return lifecycle.Continue
	}
	return lifecycle.AwaitUser
}

// round makes one model call and acts on the answer. done reports that the
// turn ends with the lifecycle event next.
func (r *run) round(ctx context.Context) (next lifecycle.Event, done bool) {
	req := &llm.Request{
		System:   r.t.Recipe.SystemPrompt,
		Messages: conversation.ProviderView(r.all),
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
	resp, err := llm.Collect(r.t.Model.Generate(ctx, req))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			r.add(byEngine, conversation.NewSystemNotice(NoticeTimeout, fmt.Sprintf(
				"The turn was stopped after %s (limits.turn_timeout). Send a message to continue.",
				r.t.Recipe.Limits.Timeout())))
		} else {
			r.add(byEngine, conversation.NewSystemNotice(NoticeModelError, "The model call failed: "+err.Error()))
		}
		return r.idle(), true
	}
	for _, rs := range resp.Reasoning {
		r.add(byModel, conversation.NewReasoning(rs.Text, rs.Signature, rs.Payload))
	}
	if resp.Empty() {
		return r.empty()
	}
	if !r.respondMode {
		return r.natural(ctx, &resp)
	}
	return r.respond(ctx, &resp)
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
func (r *run) natural(ctx context.Context, resp *llm.Response) (lifecycle.Event, bool) {
	if resp.Text != "" {
		r.add(byModel, conversation.NewChatMessage(resp.Text))
	}
	if len(resp.ToolCalls) == 0 {
		return r.idle(), true
	}
	for _, c := range resp.ToolCalls {
		r.add(byModel, conversation.NewToolCallRequest(c.ID, c.Name, c.Arguments))
	}
	for _, c := range resp.ToolCalls {
		r.call(ctx, c)
	}
	return "", false
}

// respond handles an answer when turns end with the respond tool.
func (r *run) respond(ctx context.Context, resp *llm.Response) (lifecycle.Event, bool) {
	if resp.Text != "" {
		// Free text beside tools is the model thinking aloud, not the
		// reply: the reply goes through respond.
		aside := conversation.NewChatMessage(resp.Text)
		aside.ChatResponse.Audience = []conversation.Role{conversation.RoleAssistant}
		r.add(byModel, aside)
	}
	if len(resp.ToolCalls) == 0 {
		if c, ok := r.check(&validators.Answer{Text: resp.Text}); ok {
			r.correct(c, "")
			return "", false
		}
		// Legacy fallback: the text is delivered as the answer.
		answer := conversation.NewChatMessage(resp.Text)
		answer.ChatResponse.Audience = []conversation.Role{conversation.RoleUser}
		r.add(byEngine, answer)
		return r.idle(), true
	}

	for _, c := range resp.ToolCalls {
		r.add(byModel, conversation.NewToolCallRequest(c.ID, c.Name, c.Arguments))
	}
	if len(resp.ToolCalls) > 1 {
		// respond must stand alone: the other calls run, respond is refused
		// so that the model answers after it has seen their results.
		for _, c := range resp.ToolCalls {
			if c.Name == tools.Respond {
				r.result(c, tools.ErrorResult("%s", tools.RespondNotAloneError))
				continue
			}
			r.call(ctx, c)
		}
		return "", false
	}
	c := resp.ToolCalls[0]
	if c.Name != tools.Respond {
		r.call(ctx, c)
		return "", false
	}
	if err := r.t.Tools.Check(c); err != nil {
		r.result(c, tools.ErrorResult("%s", err.Error()))
		return "", false
	}
	args, err := tools.ParseRespond(c.Arguments)
	if err != nil {
		r.result(c, tools.ErrorResult("%s", err.Error()))
		return "", false
	}
	if corr, ok := r.check(&validators.Answer{Text: resp.Text, ToolCalls: 1, Reply: args.Message, IsReply: true}); ok {
		r.result(c, tools.ErrorResult("%s", corr.Text))
		r.correct(corr, c.ID)
		return "", false
	}
	r.result(c, tools.RespondResult(args))
	if args.AwaitingUserInput {
		return lifecycle.AwaitUser, true
	}
	return lifecycle.Continue, true
}

// check runs the validators on a while the correction budget lasts and
// counts the correction it returns.
func (r *run) check(a *validators.Answer) (validators.Correction, bool) {
	if r.corrections >= r.budget {
		return validators.Correction{}, false
	}
	a.Turn = r.events()
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

// call runs tool call c through the registry and records its result.
func (r *run) call(ctx context.Context, c conversation.ToolCall) {
	r.result(c, r.t.Tools.Call(ctx, c))
}

func (r *run) result(c conversation.ToolCall, res tools.Result) {
	r.add("tool:"+c.Name, conversation.NewToolCallResponse(c.ID, c.Name, res.Content, res.IsError))
}
