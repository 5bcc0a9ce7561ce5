package worker

import (
	"context"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/validators"
)

// Engine runs the turns of workers. Its zero value is ready to use with the
// wall clock; it holds no per-turn state and is safe for concurrent use.
type Engine struct {
	// Clock stamps events; time.Now when nil.
	Clock func() time.Time
}

var _ engines.Engine = (*Engine)(nil)

// Kind is the worker engine kind, stamped by clock: a task kind
// (spawn_worker starts its processes, and their results reach the parent).
func Kind(clock func() time.Time) engines.Kind {
	return engines.Kind{Name: recipes.EngineWorker, Engine: &Engine{Clock: clock}, Task: true, Terms: contract{}.Terms}
}

// Run plays one turn of a worker, or resumes one (engines.Engine).
func (e *Engine) Run(ctx context.Context, t *engines.Turn, cp engines.Checkpointer) (engines.Outcome, error) {
	return rounds.Run(ctx, t, cp, contract{}, e.Clock)
}

// contract is the worker's: a lone finish_task call ends the task with its
// result; in the natural mode the model's final text is the result.
type contract struct{}

func (contract) Ending(r *recipes.Recipe, reg *tools.Registry) (string, []validators.Validator) {
	if r.TurnEndMode() != recipes.TurnEndFinishTask || !reg.Has(tools.FinishTask) {
		return "", nil
	}
	return tools.FinishTask, []validators.Validator{validators.NoToolCall{Correction: r.Validation.NoToolCall.Correction}}
}

func (contract) NotAlone() string { return tools.FinishNotAloneError }

func (contract) AnswerArgument() string { return "result" }

func (contract) End(e *rounds.Ending, c conversation.ToolCall, _ string) (lifecycle.Event, bool) {
	args, err := tools.ParseFinish(c.Arguments)
	if err != nil {
		e.Refuse(c, err.Error())
		return "", false
	}
	return finish(e, c, args)
}

// Answer: a worker never ends silent. Its free text, in the natural mode or
// once the corrections are spent, is the task's result (checked against the
// recipe's result_schema like finish_task's).
func (contract) Answer(e *rounds.Ending, text string, _ bool) (lifecycle.Event, bool) {
	return finish(e, conversation.ToolCall{}, tools.FinishArgs{Result: text, Status: tools.FinishDone})
}

// Idle: a worker that ends a turn without its result keeps going (READY);
// nobody would answer it.
func (contract) Idle() lifecycle.Event { return lifecycle.Continue }

// Reports: the parent is told of a failed task.
func (contract) Reports() bool { return true }

// Rule is the worker engine's contract text: how a task ends with
// finish_task. The engine adds it after the system prompt of recipes whose
// turns end with finish_task (engines.System).
const Rule = `When the task is done, or cannot be done, call ` + "`finish_task`" + ` with the
complete result: everything the task asked for, with the sources you used,
or what stopped you and what you tried. ` + "`finish_task`" + ` must be the LAST and
ONLY tool call of its response, after you have seen the results of all
your other calls. Never end with plain text: only ` + "`finish_task`" + ` delivers
the result.
`

// Terms: with turn_end finish_task, the finish_task rule; in the natural
// mode none (the final text is the result).
func (contract) Terms(r *recipes.Recipe) engines.Terms {
	if r.TurnEndMode() != recipes.TurnEndFinishTask {
		return engines.Terms{}
	}
	return engines.Terms{Text: Rule, Ending: tools.FinishTask}
}
