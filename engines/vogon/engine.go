package vogon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/validators"
)

// NoticeGateFailed is the code of the notice of a process whose phase kept
// failing its gate under on_fail: fail.
const NoticeGateFailed = "phase_gate_failed"

// Engine runs vogon turns. Its zero value is ready to use with the wall
// clock; it holds no per-turn state and is safe for concurrent use.
type Engine struct {
	// Clock stamps events; time.Now when nil.
	Clock func() time.Time
}

var _ engines.Engine = (*Engine)(nil)

// Kind is the vogon engine kind, stamped by clock. A worker-like vogon
// recipe (turn_end: finish_task) carries out tasks: spawn_worker starts it,
// and its last phase's result reaches the parent (Kind.TaskOf).
func Kind(clock func() time.Time) engines.Kind {
	return engines.Kind{Name: recipes.EngineVogon, Engine: &Engine{Clock: clock},
		Terms:  func(*recipes.Recipe) engines.Terms { return engines.Terms{Ending: PhaseDone} },
		TaskOf: func(r *recipes.Recipe) bool { return r.TurnEndMode() == recipes.TurnEndFinishTask }}
}

// Run plays one vogon turn, or resumes one (engines.Engine): the current
// phase's rounds, then, while phases pass their gates, the next phases'.
func (e *Engine) Run(ctx context.Context, t *engines.Turn, cp engines.Checkpointer) (engines.Outcome, error) {
	clock := e.Clock
	if clock == nil {
		clock = time.Now
	}
	phases := t.Recipe.Phases
	if len(phases) == 0 {
		return engines.Outcome{}, fmt.Errorf("vogon: turn %s: recipe %s has no phases", t.ID, t.Recipe.Name)
	}
	p := &pipeline{t: t, cp: cp, now: clock, events: t.Current, committed: len(t.Current)}
	st := read(phases, t.History, p.events)
	if st.phase < 0 { // a new run of the pipeline
		p.add(conversation.NewPhaseChange("", phases[0].Name, conversation.PhaseStart, nil))
		st = read(phases, t.History, p.events)
	}
	for {
		out, c, err := p.phase(ctx, st)
		if err != nil {
			return engines.Outcome{}, err
		}
		p.events, p.committed = out.Events, len(out.Events)-len(out.Pending)
		p.rounds = out.Rounds
		cur := phases[st.phase]
		switch {
		case c.passed && st.phase == len(phases)-1:
			p.add(conversation.NewPhaseChange(cur.Name, "", conversation.PhaseDone, c.result))
			return p.outcome(out), nil
		case c.passed:
			p.add(conversation.NewPhaseChange(cur.Name, phases[st.phase+1].Name, conversation.PhaseDone, c.result))
		case c.spent:
			switch cur.OnFail.Do() {
			case recipes.OnFailRetry:
				p.add(conversation.NewPhaseChange(cur.Name, cur.Name, conversation.PhaseRetry, nil))
			case recipes.OnFailBackTo:
				p.add(conversation.NewPhaseChange(cur.Name, cur.OnFail.BackTo, conversation.PhaseBackTo, nil))
			default:
				p.add(conversation.NewPhaseChange(cur.Name, "", conversation.PhaseFailed, nil))
				text := fmt.Sprintf("Phase %s kept failing its gate (validation.max_corrections spent) and its on_fail is fail: the process failed. "+
					"Fix the recipe's prompt or gate, then retry the process.", cur.Name)
				p.add(conversation.NewSystemNotice(NoticeGateFailed, text))
				out.Next = lifecycle.Fail
				return p.outcome(out), nil
			}
		default: // the turn ends within the phase: limits, a halt, approvals, free text
			return p.outcome(out), nil
		}
		if err := p.save(ctx); err != nil {
			return engines.Outcome{}, err
		}
		st = read(phases, t.History, p.events)
	}
}

// pipeline is the state of one vogon turn.
type pipeline struct {
	t         *engines.Turn
	cp        engines.Checkpointer
	now       func() time.Time
	events    []conversation.Event // the turn's, t.Current first
	committed int                  // how many of them a checkpoint has seen
	rounds    int
}

// add stamps ev as the engine's, in this turn, and appends it.
func (p *pipeline) add(ev conversation.Event) {
	ev.At, ev.Turn, ev.By = p.now(), p.t.ID, "engine"
	p.events = append(p.events[:len(p.events):len(p.events)], ev)
}

// save checkpoints the events no checkpoint has seen.
func (p *pipeline) save(ctx context.Context) error {
	if p.committed == len(p.events) {
		return nil
	}
	if err := p.cp.Checkpoint(ctx, p.events[p.committed:]); err != nil {
		return fmt.Errorf("vogon: turn %s: checkpoint: %w", p.t.ID, err)
	}
	p.committed = len(p.events)
	return nil
}

// outcome is the turn's outcome: out's, with the events added since.
func (p *pipeline) outcome(out engines.Outcome) engines.Outcome {
	out.Events, out.Pending, out.Rounds = p.events, p.events[p.committed:], p.rounds
	return out
}

// phase runs the rounds of the current phase of st, until they end it or
// the turn.
func (p *pipeline) phase(ctx context.Context, st state) (engines.Outcome, *contract, error) {
	if err := p.save(ctx); err != nil { // the rounds take p.events as committed
		return engines.Outcome{}, nil, err
	}
	rc := p.t.Recipe
	ph := rc.Phases[st.phase]
	gate, err := recipes.CompileGate(ph.Gate.Schema)
	if err != nil { // lint refuses such a recipe
		return engines.Outcome{}, nil, fmt.Errorf("vogon: recipe %s: phases[%d].gate.schema: %w", rc.Name, st.phase, err)
	}
	chat := rc.TurnEndMode() == recipes.TurnEndRespond
	reg, err := phaseTools(p.t.Tools, ph, chat)
	if err != nil {
		return engines.Outcome{}, nil, fmt.Errorf("vogon: recipe %s: phase %s: %w", rc.Name, ph.Name, err)
	}
	prc := rc.Clone()
	prc.SystemPrompt = prompt(rc, st)
	pt := *p.t
	pt.Recipe, pt.Tools, pt.Current = prc, reg, p.events
	c := &contract{
		gate:     gate,
		budget:   rc.Validation.Corrections() - gateFailures(p.events, st.since),
		last:     st.phase == len(rc.Phases)-1,
		worker:   rc.TurnEndMode() == recipes.TurnEndFinishTask,
		respond:  chat && reg.Has(tools.Respond),
		approval: string(ph.Approval),
	}
	c.rule = rule(ph, c.respond)
	out, err := rounds.Run(ctx, &pt, p.cp, c, p.now)
	return out, c, err
}

// prompt is the system prompt of the current phase of st: the recipe's,
// the phase's, its gate, and the results of the phases before.
func prompt(rc *recipes.Recipe, st state) string {
	ph := rc.Phases[st.phase]
	var b strings.Builder
	if rc.SystemPrompt != "" {
		b.WriteString(strings.TrimSpace(rc.SystemPrompt))
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "# Phase %d of %d: %s\n\n", st.phase+1, len(rc.Phases), ph.Name)
	if ph.SystemPrompt != "" {
		b.WriteString(strings.TrimSpace(ph.SystemPrompt))
		b.WriteString("\n\n")
	}
	var earlier []string
	for _, q := range rc.Phases[:st.phase] {
		if r, ok := st.results[q.Name]; ok {
			earlier = append(earlier, fmt.Sprintf("## %s\n\n%s\n", q.Name, r))
		}
	}
	if len(earlier) > 0 {
		b.WriteString("\n# Results of the earlier phases\n\n")
		b.WriteString(strings.Join(earlier, "\n"))
	}
	if st.back != nil {
		fmt.Fprintf(&b, "\n# Sent back to this phase\n\nPhase %s could not pass its gate and sent the pipeline back to this phase. "+
			"Improve on this phase's earlier result so that %s can pass; do not start from nothing.\n", st.back.from, st.back.from)
		if r, ok := st.results[ph.Name]; ok {
			fmt.Fprintf(&b, "\n## Your earlier result of this phase\n\n%s\n", r)
		}
		if len(st.back.errors) > 0 {
			fmt.Fprintf(&b, "\n## Why %s's results were refused\n\n", st.back.from)
			for _, e := range st.back.errors {
				fmt.Fprintf(&b, "- %s\n", e)
			}
		}
	}
	return b.String()
}

// contract ends a phase's rounds: a lone phase_done whose result passes the
// gate ends them (passed), as does a refused one once the budget is spent
// (spent); free text ends the turn, waiting for the user.
type contract struct {
	rule     string // how the phase ends, for the model (Terms)
	gate     *jsv.Schema
	budget   int    // the gate failures the phase may still have
	last     bool   // the last phase: its result is the turn's answer
	worker   bool   // the answer is a task's result (turn_end: finish_task)
	respond  bool   // the phase offers respond: a lone call talks with the user
	approval string // who approves a result that passed the gate ("": nobody)

	passed, spent bool
	result        json.RawMessage
}

var (
	_ rounds.Endings = (*contract)(nil)
	_ rounds.Decider = (*contract)(nil)
)

func (c *contract) Ending(r *recipes.Recipe, _ *tools.Registry) (string, []validators.Validator) {
	return PhaseDone, []validators.Validator{validators.NoToolCall{Correction: or(r.Validation.NoToolCall.Correction, DefaultCorrection)}}
}

func (c *contract) NotAlone() string { return NotAloneError }

// Terms is the phase's contract text, after the phase's prompt: how it
// ends, with its gate.
func (c *contract) Terms(*recipes.Recipe) engines.Terms {
	return engines.Terms{Text: c.rule, Ending: PhaseDone}
}

// rule says how phase ph ends: phase_done alone, with a result that
// passes its gate, then a person's approval if the phase asks for one;
// with respond, how the phase talks with the user meanwhile.
func rule(ph recipes.Phase, respond bool) string {
	var b strings.Builder
	b.WriteString("End this phase by calling `phase_done` alone, with its result")
	if ph.Gate.Schema != nil {
		schema, _ := json.Marshal(ph.Gate.Schema)
		fmt.Fprintf(&b, ", which must match this JSON Schema: %s", schema)
	}
	b.WriteString(".")
	if ph.Approval != "" {
		fmt.Fprintf(&b, " Once it passes, the result waits for the approval of the %s before the pipeline goes on; "+
			"a rejection comes back as phase_done's error result with the reason: rework the result, then call `phase_done` again.", ph.Approval)
	}
	if respond {
		b.WriteString(" To talk with the user during this phase (a question, a progress note), call `respond` alone: with " +
			"`awaiting_user_input` true the phase waits for the user's answer and goes on with it; with false it goes on at once. `respond` does not end the phase.")
	}
	return b.String()
}

// Also: a phase of a chat-like vogon offers respond, which ends the turn,
// not the phase (End).
func (c *contract) Also(*recipes.Recipe, *tools.Registry) map[string]string {
	if !c.respond {
		return nil
	}
	return map[string]string{tools.Respond: tools.RespondNotAloneError}
}

func (c *contract) AnswerArgument() string { return "result" }

func (c *contract) End(e *rounds.Ending, call conversation.ToolCall, _ string) (lifecycle.Event, bool) {
	if call.Name == tools.Respond {
		return c.respondCall(e, call)
	}
	result, err := parseDone(call.Arguments)
	if err == nil && c.gate != nil {
		var v any
		if v, err = jsv.UnmarshalJSON(bytes.NewReader(result)); err == nil {
			if verr := c.gate.Validate(v); verr != nil {
				err = fmt.Errorf("%s%s", GateFailed, strings.ReplaceAll(verr.Error(), "\n", " "))
			}
		}
	}
	if err != nil {
		e.Refuse(call, err.Error())
		if c.budget--; c.budget < 0 {
			c.spent = true
			return lifecycle.Continue, true
		}
		return "", false
	}
	if c.approval != "" { // the result waits for a person before the pipeline goes on
		e.Await(call, c.approval)
		return lifecycle.AwaitUser, true
	}
	return c.pass(e, call, result)
}

// pass ends the phase with result, which passed its gate (and, if the
// phase asks for one, a person's approval): the next phase follows, or the
// last one's result is the answer, or the task's.
func (c *contract) pass(e *rounds.Ending, call conversation.ToolCall, result json.RawMessage) (lifecycle.Event, bool) {
	c.passed, c.result = true, result
	e.Deliver(call, tools.Result{Content: []conversation.Block{conversation.TextBlock(Ack).For(conversation.RoleAssistant)}})
	if !c.last {
		return lifecycle.Continue, true
	}
	if c.worker {
		fin := tools.FinishArgs{Result: answer(result), Status: tools.FinishDone}
		if !isString(result) { // the parent gets it parsed too, as a result_schema worker's
			fin.Data = result
		}
		e.Finish(fin)
		return lifecycle.Finish, true
	}
	e.Say(answer(result))
	return lifecycle.AwaitUser, true
}

// Decided acts on a person's decision on a phase_done call that waited for
// the phase's approval (rounds.Decider): an approval passes the phase; a
// rejection is the call's error result, with the reason, and the phase goes
// on (the model reworks its result and calls phase_done again, which waits
// again), spending no correction.
func (c *contract) Decided(e *rounds.Ending, call conversation.ToolCall, d conversation.ApprovalDecision, by string) (lifecycle.Event, bool) {
	if d.Decision != conversation.Approve {
		text := Rejected + by + " rejected the result"
		if d.Reason != "" {
			text += " (reason: " + d.Reason + ")"
		}
		e.Refuse(call, text+". The phase goes on: rework the result as the reason says, then call `phase_done` again.")
		return "", false
	}
	result, err := parseDone(call.Arguments)
	if err != nil { // it passed the gate before it waited
		e.Refuse(call, err.Error())
		return "", false
	}
	return c.pass(e, call, result)
}

// respondCall handles a lone respond of a chat-like phase: the message goes
// to the user, and the phase does not end. With awaiting_user_input the
// turn ends waiting for the user, whose next message goes on in the phase;
// without, the phase goes on at once, in this turn (a progress note: a
// READY process with an empty inbox would not be woken to go on).
func (c *contract) respondCall(e *rounds.Ending, call conversation.ToolCall) (lifecycle.Event, bool) {
	args, err := tools.ParseRespond(call.Arguments)
	if err != nil {
		e.Refuse(call, err.Error())
		return "", false
	}
	e.Deliver(call, tools.RespondResult(args))
	if args.AwaitingUserInput {
		return lifecycle.AwaitUser, true
	}
	return "", false
}

// isString reports whether result is a JSON string.
func isString(result json.RawMessage) bool {
	var s string
	return json.Unmarshal(result, &s) == nil
}

// Answer: free text instead of phase_done (validation off, or its
// corrections spent) is said to the user, who is waited for; the phase
// goes on with the next message.
func (c *contract) Answer(e *rounds.Ending, text string, natural bool) (lifecycle.Event, bool) {
	if !natural {
		e.Say(text)
	}
	return lifecycle.AwaitUser, true
}

// Idle: a vogon turn that ends without a decision waits for a message.
func (c *contract) Idle() lifecycle.Event { return lifecycle.AwaitUser }

// Reports: a worker-like vogon reports its failures to a parent.
func (c *contract) Reports() bool { return c.worker }

// answer is the text of a final result: a string as it is, anything else
// as its JSON.
func answer(result json.RawMessage) string {
	var s string
	if json.Unmarshal(result, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Indent(&buf, result, "", "  ") == nil {
		return buf.String()
	}
	return string(result)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
