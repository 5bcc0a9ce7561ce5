package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/engine-brain/brain/conversation"
)

// Spawner starts worker processes. The runtime implements it; spawn_worker
// calls it.
type Spawner interface {
	// Spawn starts a process of the worker recipe as a child of parent,
	// with task as all its input, and returns the child's id. The model
	// reads the text of an error: say what was refused and how to fix it
	// (no such worker recipe, workers nested too deep, too many workers in
	// one turn). Spawn must be idempotent under parent.CallKey, when set:
	// a second call with it returns the child the first started (a
	// resumed turn runs a spawn_worker call that has no result again).
	Spawn(ctx context.Context, parent Caller, recipe, task string) (childID string, err error)
}

// Texts of spawn_worker.
const (
	// SpawnRecipeBlank and SpawnTaskBlank are the errors of a spawn_worker
	// call with an empty recipe or task.
	SpawnRecipeBlank = `spawn_worker "recipe" is blank: name the worker recipe to run`
	SpawnTaskBlank   = `spawn_worker "task" is blank: write the worker's complete instructions in it`
)

// SpawnWorkerDescription is the model-visible description of spawn_worker.
const SpawnWorkerDescription = "Start a worker process that carries out one task on its own and reports back. " +
	"'recipe' names the worker recipe to run; 'task' is the worker's complete instructions: the worker " +
	"sees nothing else, not this conversation, so say what to do, where to look and what the result " +
	"must contain. The call returns at once with the worker's id; its result arrives later in your " +
	"inbox as a process_event message. If you have nothing else to do meanwhile, end your turn with " +
	"respond(awaiting_user_input: false): you will be woken when the result arrives."

const spawnWorkerSchema = `{
	"type": "object",
	"properties": {
		"recipe": {
			"type": "string",
			"description": "Name of the worker recipe to run."
		},
		"task": {
			"type": "string",
			"description": "The worker's complete, self-contained instructions: what to do, where to look, what the result must contain. The worker sees nothing else."
		}
	},
	"required": ["recipe", "task"],
	"additionalProperties": false
}`

// spawnArgs are the arguments of a spawn_worker call.
type spawnArgs struct {
	Recipe string `json:"recipe"`
	Task   string `json:"task"`
}

// SpawnWorkerTool returns the spawn_worker tool, which starts workers
// through s for the [Caller] of the call's context. s must not be nil.
func SpawnWorkerTool(s Spawner) Tool { return spawnWorkerTool{s: s} }

// SpawnWorkerFactory returns the catalog entry of spawn_worker, which takes
// no settings. It fails to build without a spawner.
func SpawnWorkerFactory(s Spawner) Factory {
	return runtimeFactory(SpawnWorker, s != nil, func() Tool { return SpawnWorkerTool(s) })
}

type spawnWorkerTool struct{ s Spawner }

var _ Tool = spawnWorkerTool{}

func (spawnWorkerTool) Definition() Definition {
	return Definition{Name: SpawnWorker, Description: SpawnWorkerDescription, Schema: Compact(spawnWorkerSchema), Idempotent: true}
}

func (t spawnWorkerTool) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	parent, err := callerOf(ctx, SpawnWorker)
	if err != nil {
		return Result{}, err
	}
	var a spawnArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return Result{}, reason(ErrInvalidArguments, `invalid arguments for spawn_worker (%v); send {"recipe": "...", "task": "..."}`, err)
	}
	switch {
	case strings.TrimSpace(a.Recipe) == "":
		return Result{}, reason(ErrInvalidArguments, SpawnRecipeBlank)
	case strings.TrimSpace(a.Task) == "":
		return Result{}, reason(ErrInvalidArguments, SpawnTaskBlank)
	}
	id, err := t.s.Spawn(ctx, parent, a.Recipe, a.Task)
	if err != nil {
		return Result{}, err
	}
	if id == "" {
		return Result{}, errors.New("spawn_worker: the runtime started no worker (it returned no id)")
	}
	return assistantResult(fmt.Sprintf("Started worker %s (recipe %s). Its result will arrive in your inbox as a process_event message. "+
		"If you have nothing else to do now, end your turn with respond(awaiting_user_input: false); you will be woken when it arrives.", id, a.Recipe)), nil
}

// assistantResult returns a successful result of one plain text block
// addressed to the assistant: a report for the model that the user view
// leaves out.
func assistantResult(text string) Result {
	return Result{Content: []conversation.Block{conversation.TextBlock(text).For(conversation.RoleAssistant)}}
}
