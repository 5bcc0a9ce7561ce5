package zaphod

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// AudienceEngine addresses a head's answer to the engine alone: the user
// view and the provider view leave it out (conversation.ChatResponse's
// Audience holds neither user nor assistant).
const AudienceEngine conversation.Role = "engine"

// ByHead prefixes the Event.By of a head's events: "head:NAME"
// (conversation.ByHead: neither the provider view nor the user view shows
// them).
const ByHead = conversation.ByHead

// Codes of the notices that a head gave no answer: it failed (its model,
// a limit, a panic), or its timeout ended it.
const (
	NoticeHeadFailed  = "head_failed"
	NoticeHeadTimeout = "head_timeout"
)

// Engine runs zaphod turns. Its zero value is ready to use with the wall
// clock; it holds no per-turn state and is safe for concurrent use.
type Engine struct {
	// Clock stamps events; time.Now when nil.
	Clock func() time.Time

	// answered, when set (tests), is called after each head's answer or
	// failure is checkpointed, with the head's name.
	answered func(head string)
}

var _ engines.Engine = (*Engine)(nil)

// Kind is the zaphod engine kind, stamped by clock.
func Kind(clock func() time.Time) engines.Kind {
	return engines.Kind{Name: recipes.EngineZaphod, Engine: &Engine{Clock: clock},
		Terms: func(*recipes.Recipe) engines.Terms { return engines.Terms{Ending: tools.Respond} }} // the synthesis's, a chat turn's
}

// answer is what one head gave: its answer text, or why it gave none.
type answer struct {
	text     string
	failed   string
	timedOut bool // failed: its timeout ended it
}

// Run plays one zaphod turn, or resumes one (engines.Engine).
func (e *Engine) Run(ctx context.Context, t *engines.Turn, cp engines.Checkpointer) (engines.Outcome, error) {
	clock := e.Clock
	if clock == nil {
		clock = time.Now
	}
	current := t.Current
	if !spent(t) {
		var err error
		var halted bool
		if current, halted, err = e.askHeads(ctx, t, cp, clock); err != nil {
			return engines.Outcome{}, err
		}
		if halted {
			notice := stamp(conversation.NewSystemNotice(rounds.NoticeHalted,
				"The turn ended early: the process was paused, stopped or failed while its heads answered. What they answered is kept."), t.ID, "engine", clock)
			evs := append(current, notice)
			return engines.Outcome{Events: evs, Pending: evs[len(evs)-1:], Next: lifecycle.Continue, Halted: true}, nil
		}
		answers := answers(current)
		if failed := allFailed(t.Recipe.Heads, answers); failed != "" {
			notice := stamp(conversation.NewSystemNotice(rounds.NoticeModelError,
				"Every head failed, so there is no answer to compose: "+failed+". Send a message to try again."), t.ID, "engine", clock)
			evs := append(current, notice)
			return engines.Outcome{Events: evs, Pending: evs[len(evs)-1:], Next: lifecycle.AwaitUser}, nil
		}
	}
	return e.synthesize(ctx, t, current, cp, clock)
}

// spent says that the process's token budget leaves no model call: the
// synthesis, as a chat turn, says so without asking the heads.
func spent(t *engines.Turn) bool {
	in, out := conversation.TokensUsed(t.Current)
	used := in + out
	l := t.Recipe.Limits
	return (l.MaxTokens > 0 && t.TokensUsed+used >= l.MaxTokens) || (l.MaxTokensPerDay > 0 && t.TokensToday+used >= l.MaxTokensPerDay)
}

// result is what a head's goroutine hands back.
type result struct {
	head   string
	events []conversation.Event // its usage, then its answer or failure
	halted bool                 // the process was halted, or ctx ended: nothing to log
}

// askHeads asks the heads that t.Current has no answer of, concurrently,
// and checkpoints each one's events as they arrive. It returns the turn's
// events so far.
func (e *Engine) askHeads(ctx context.Context, t *engines.Turn, cp engines.Checkpointer, clock func() time.Time) ([]conversation.Event, bool, error) {
	have := answers(t.Current)
	var missing []recipes.Head
	for _, h := range t.Recipe.Heads {
		if _, ok := have[h.Name]; !ok {
			missing = append(missing, h)
		}
	}
	current := t.Current
	if len(missing) == 0 {
		return current, false, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan result, len(missing)) // buffered: a head never waits for the checkpoint of another
	start := clock()                           // the heads' own clock: clock need not be safe for concurrent use
	p := newShared(t)
	for _, h := range missing {
		go func() { results <- ask(ctx, t, h, p, func() time.Time { return start }) }()
	}
	current = append(make([]conversation.Event, 0, len(current)+3*len(missing)), current...)
	halted := false
	var cpErr error
	for range missing {
		res := <-results
		if res.halted || cpErr != nil {
			halted = halted || res.halted
			continue
		}
		for i := range res.events { // stamped as they arrive
			res.events[i].At = clock()
		}
		if err := cp.Checkpoint(ctx, res.events); err != nil {
			cpErr = fmt.Errorf("zaphod: turn %s: head %s: checkpoint: %w", t.ID, res.head, err)
			cancel() // the others' answers could not be kept either
			continue
		}
		current = append(current, res.events...)
		if e.answered != nil {
			e.answered(res.head)
		}
	}
	if cpErr != nil {
		return nil, false, cpErr
	}
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("zaphod: turn %s: %w", t.ID, context.Cause(ctx))
	}
	return current, halted, nil
}

// shared is what every head of a turn shares: the tools a head may call
// (or why there are none), and the turn's conversation without the heads'
// own events, with the tokens those used.
type shared struct {
	tools    *tools.Registry
	toolsErr error
	main     []conversation.Event
	used     int64
}

func newShared(t *engines.Turn) shared {
	reg, err := headTools(t.Tools)
	main, used := mainLine(t.Current)
	return shared{tools: reg, toolsErr: err, main: main, used: used}
}

// errTimeout is the cause of a head's context when its timeout ends it.
var errTimeout = errors.New("zaphod: the head's timeout ended")

// ask plays head h's own turn: the conversation under its system prompt
// and model, in the recipe's round loop and limits, ended by respond or
// free text, within its timeout. A panic in it is a failure of the head,
// not of the node. What it logs (see logged) is its model usage, its tool
// calls and their results, then its answer or its failure.
func ask(ctx context.Context, t *engines.Turn, h recipes.Head, p shared, clock func() time.Time) (res result) {
	res.head = h.Name
	by := ByHead + h.Name
	defer func() {
		if p := recover(); p != nil {
			res = result{head: h.Name, events: []conversation.Event{failure(t.ID, by, fmt.Sprintf("the head panicked: %v", p), clock)}}
		}
	}()
	hr := *t.Recipe // shallow: the head's turn reads it only
	hr.Model = h.Model.Over(t.Recipe.Model)
	if h.SystemPrompt != "" {
		hr.SystemPrompt = h.SystemPrompt
	}
	off := false
	hr.Validation.Enabled = &off
	model, err := modelOf(t, h.Model, hr.Model)
	if err != nil {
		res.events = []conversation.Event{failure(t.ID, by, err.Error(), clock)}
		return res
	}
	if p.toolsErr != nil {
		res.events = []conversation.Event{failure(t.ID, by, p.toolsErr.Error(), clock)}
		return res
	}
	hctx := ctx
	if h.Timeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeoutCause(ctx, time.Duration(h.Timeout), errTimeout)
		defer cancel()
	}
	current := p.main[:len(p.main):len(p.main)] // full: the heads' appends never share its array
	c := &headContract{}
	kept := &collector{}
	out, err := rounds.Run(hctx, &engines.Turn{
		// The head's own turn id keys its tool calls (tools.Caller.CallKey):
		// two heads' first calls are two calls, each the same when the head
		// is asked again.
		ID: t.ID + "/" + h.Name, Recipe: &hr, Model: model, Tools: p.tools,
		History: t.History, HistoryView: t.HistoryView, HistoryTokens: t.HistoryTokens, HistoryOmitted: t.HistoryOmitted,
		Current: current, ContextTokens: t.ContextTokens, TokensUsed: t.TokensUsed + p.used, TokensToday: t.TokensToday + p.used,
		Halt: t.Halt,
	}, kept, c, clock)
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(context.Cause(hctx), errTimeout):
		timedOut := stamp(conversation.NewSystemNotice(NoticeHeadTimeout, fmt.Sprintf(
			"Head %s gave no answer within its timeout (%s).", h.Name, time.Duration(h.Timeout))), t.ID, by, clock)
		res.events = append(logged(kept.events, t.ID, by), timedOut)
		return res
	case err != nil || out.Halted:
		res.halted = true
		return res
	}
	mine := out.Events[len(current):]
	res.events = logged(mine, t.ID, by)
	var why string
	for _, ev := range mine {
		if ev.SystemNotice != nil {
			why = ev.SystemNotice.Text
		}
	}
	if c.ok {
		ans := conversation.NewChatMessage(c.answer)
		ans.ChatResponse.Audience = []conversation.Role{AudienceEngine}
		res.events = append(res.events, stamp(ans, t.ID, by, clock))
	} else {
		res.events = append(res.events, failure(t.ID, by, cmp.Or(why, "the head gave no answer"), clock))
	}
	return res
}

// logged returns what the log keeps of the events a head's rounds added:
// its model usage, and each tool call that has a result with its result
// (the call of respond that ends the head is its answer, logged as one),
// all under by, in the turn, in the order they happened. The rest (its
// text, its reasoning, the notice of why it failed, which its failure
// carries) is the head's alone.
func logged(events []conversation.Event, turn, by string) []conversation.Event {
	answered := make(map[string]bool)
	for _, ev := range events {
		if r := ev.ToolCallResponse; r != nil {
			answered[r.CallID] = true
		}
	}
	var out []conversation.Event
	for _, ev := range events {
		switch {
		case ev.ModelUsage != nil, ev.ToolCallResponse != nil,
			ev.ToolCallRequest != nil && answered[ev.ToolCallRequest.CallID]:
			ev.Turn, ev.By = turn, by
			out = append(out, ev)
		}
	}
	return out
}

// mainLine returns events without the heads' (Event.Aside), which the
// round loop of a head or of the synthesis is not shown, and the tokens
// the heads' model calls among them used, which count towards the
// process's budgets all the same (today's too: they are this turn's).
func mainLine(events []conversation.Event) (rest []conversation.Event, used int64) {
	rest = make([]conversation.Event, 0, len(events))
	var aside []conversation.Event
	for _, ev := range events {
		if ev.Aside() {
			aside = append(aside, ev)
			continue
		}
		rest = append(rest, ev)
	}
	in, out := conversation.TokensUsed(aside)
	return rest, in + out
}

// modelOf is the model of a head or of the synthesis, whose model section
// own completes the recipe's into merged: the turn's model when own is
// empty or the runtime resolves none (offline play: one scripted model).
func modelOf(t *engines.Turn, own, merged recipes.Model) (llm.Model, error) {
	if t.Models == nil || own.Provider == "" && own.BaseURL == "" && own.Name == "" && own.Fallbacks == nil {
		return t.Model, nil
	}
	return t.Models(merged)
}

func failure(turn, by, why string, clock func() time.Time) conversation.Event {
	return stamp(conversation.NewSystemNotice(NoticeHeadFailed, "Head "+strings.TrimPrefix(by, ByHead)+" gave no answer: "+why), turn, by, clock)
}

func stamp(ev conversation.Event, turn, by string, clock func() time.Time) conversation.Event {
	ev.At, ev.Turn, ev.By = clock(), turn, by
	return ev
}

// answers returns what the heads logged in events, by name.
func answers(events []conversation.Event) map[string]answer {
	out := make(map[string]answer)
	for _, ev := range events {
		name, ok := strings.CutPrefix(ev.By, ByHead)
		if !ok {
			continue
		}
		switch {
		case ev.ChatResponse != nil:
			out[name] = answer{text: ev.ChatResponse.Text}
		case ev.SystemNotice != nil && (ev.SystemNotice.Code == NoticeHeadFailed || ev.SystemNotice.Code == NoticeHeadTimeout):
			out[name] = answer{failed: ev.SystemNotice.Text, timedOut: ev.SystemNotice.Code == NoticeHeadTimeout}
		}
	}
	return out
}

// allFailed says why, when every head failed; "" when one answered.
func allFailed(heads []recipes.Head, got map[string]answer) string {
	var whys []string
	for _, h := range heads {
		a := got[h.Name]
		if a.failed == "" {
			return ""
		}
		whys = append(whys, strings.TrimSuffix(a.failed, "."))
	}
	return strings.Join(whys, "; ")
}

// collector is a head's Checkpointer: it keeps what the head's rounds
// checkpoint, which is what is left of a head its timeout ended; the turn
// logs it (logged) with the head's answer or failure.
type collector struct{ events []conversation.Event }

func (c *collector) Checkpoint(_ context.Context, events []conversation.Event) error {
	c.events = append(c.events, events...)
	return nil
}
