package zaphod

import (
	"cmp"
	"context"
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

// ByHead prefixes the Event.By of a head's events: "head:NAME".
const ByHead = "head:"

// NoticeHeadFailed is the code of the notice that a head gave no answer.
const NoticeHeadFailed = "head_failed"

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
	text   string
	failed string
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
	for _, h := range missing {
		go func() { results <- ask(ctx, t, h, func() time.Time { return start }) }()
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

// ask plays head h's own turn: the conversation under its system prompt
// and model, in the recipe's round loop and limits, ended by respond or
// free text. A panic in it is a failure of the head, not of the node.
func ask(ctx context.Context, t *engines.Turn, h recipes.Head, clock func() time.Time) (res result) {
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
	c := &headContract{}
	out, err := rounds.Run(ctx, &engines.Turn{
		ID: t.ID, Recipe: &hr, Model: model, Tools: t.Tools,
		History: t.History, HistoryView: t.HistoryView, HistoryTokens: t.HistoryTokens, HistoryOmitted: t.HistoryOmitted,
		Current: t.Current, ContextTokens: t.ContextTokens, TokensUsed: t.TokensUsed, TokensToday: t.TokensToday,
		Halt: t.Halt,
	}, discard{}, c, clock)
	if err != nil || out.Halted {
		res.halted = true
		return res
	}
	var why string
	for _, ev := range out.Events[len(t.Current):] {
		switch {
		case ev.ModelUsage != nil:
			ev.By = by
			res.events = append(res.events, ev)
		case ev.SystemNotice != nil:
			why = ev.SystemNotice.Text
		}
	}
	switch {
	case c.ok:
		ans := conversation.NewChatMessage(c.answer)
		ans.ChatResponse.Audience = []conversation.Role{AudienceEngine}
		res.events = append(res.events, stamp(ans, t.ID, by, clock))
	case len(out.Approvals) > 0:
		res.events = append(res.events, failure(t.ID, by, "the head called a tool that needs a person's approval, which a head cannot wait for", clock))
	default:
		res.events = append(res.events, failure(t.ID, by, cmp.Or(why, "the head gave no answer"), clock))
	}
	return res
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
		case ev.SystemNotice != nil && ev.SystemNotice.Code == NoticeHeadFailed:
			out[name] = answer{failed: ev.SystemNotice.Text}
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
		whys = append(whys, a.failed)
	}
	return strings.Join(whys, "; ")
}

// discard is a head's Checkpointer: a head's rounds are not logged, only
// its answer, which the turn checkpoints.
type discard struct{}

func (discard) Checkpoint(context.Context, []conversation.Event) error { return nil }
