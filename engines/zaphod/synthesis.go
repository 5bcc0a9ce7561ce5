package zaphod

import (
	"context"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
)

// synthesize plays the synthesis: a chat turn (its rounds, tools and
// respond) under the synthesis's model and system prompt, to which the
// heads' answers are appended in the recipe's order, failed heads named
// as failed (or timed out). current is the turn's events so far, the heads' included.
func (e *Engine) synthesize(ctx context.Context, t *engines.Turn, current []conversation.Event, cp engines.Checkpointer, clock func() time.Time) (engines.Outcome, error) {
	rc := *t.Recipe
	s := rc.Synthesis
	rc.Model = s.Model.Over(t.Recipe.Model)
	if s.SystemPrompt != "" {
		rc.SystemPrompt = s.SystemPrompt
	}
	rc.SystemPrompt += panel(rc.Heads, answers(current))
	model, err := modelOf(t, s.Model, rc.Model)
	if err != nil {
		notice := stamp(conversation.NewSystemNotice(rounds.NoticeModelError, "The synthesis's model: "+err.Error()), t.ID, "engine", clock)
		evs := append(current[:len(current):len(current)], notice)
		return engines.Outcome{Events: evs, Pending: evs[len(evs)-1:], Next: lifecycle.AwaitUser}, nil
	}
	// The chat turn is not shown the heads' events (their tool calls would
	// be its own to resume), but counts their tokens; its outcome holds
	// them again, for the turn's events are all of current.
	st := *t
	main, used := mainLine(current)
	st.Recipe, st.Model, st.Current = &rc, model, main
	st.TokensUsed, st.TokensToday = t.TokensUsed+used, t.TokensToday+used
	out, err := (&chat.Engine{Clock: clock}).Run(ctx, &st, cp)
	if err != nil {
		return out, err
	}
	out.Events = append(current[:len(current):len(current)], out.Events[len(main):]...)
	return out, nil
}

// panel is what the synthesis is shown of the heads' answers, appended to
// its system prompt: each head by name, in the recipe's order.
func panel(heads []recipes.Head, got map[string]answer) string {
	var b strings.Builder
	b.WriteString("\n\n# The panel's answers\n\nEach head of the panel answered the conversation's last message on its own; compose one answer for the user from them and give it with respond.\n")
	for _, h := range heads {
		a := got[h.Name]
		b.WriteString("\n## " + h.Name)
		if a.failed != "" {
			label := " (failed)"
			if a.timedOut {
				label = " (timed out)"
			}
			b.WriteString(label + "\n\n" + strings.TrimSuffix(a.failed, ".") + ". Leave it out.\n")
			continue
		}
		b.WriteString("\n\n" + a.text + "\n")
	}
	return b.String()
}
