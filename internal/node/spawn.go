package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/ctxtime"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

var _ tools.Spawner = (*Node)(nil)

// Spawn creates a worker process for the spawn_worker tool: recipe runs
// task for parent, and its result reaches parent's inbox as a process_event.
// The worker works for the parent's owner, who sees it as her own process.
// The parent recipe's limits.max_depth bounds how deep workers nest.
//
// The call's key (parent.CallKey) is the create's idempotency key, so a
// spawn made again (a resumed turn's, or a try after Redis could not
// answer) finds the worker the first made instead of starting a second.
func (n *Node) Spawn(ctx context.Context, parent tools.Caller, recipe, task string) (string, error) {
	pr, err := n.recipe(parent.Recipe)
	if err != nil {
		return "", err
	}
	if depth := parent.Depth + 1; depth > pr.Limits.Depth() {
		return "", fmt.Errorf("spawn_worker refused: a worker here would be %d levels deep, more than limits.max_depth (%d) of recipe %s allows; do the task yourself",
			depth, pr.Limits.Depth(), pr.Name)
	}
	cr, err := n.recipe(recipe)
	if err != nil {
		return "", fmt.Errorf("spawn_worker: %w", err)
	}
	if kind, err := n.cfg.Registry.Of(cr); err != nil {
		return "", fmt.Errorf("spawn_worker: %w", err)
	} else if !kind.Tasks(cr) {
		return "", fmt.Errorf("spawn_worker refused: recipe %s runs on the %s engine, which talks with a person; "+
			"a worker's recipe runs on an engine that carries out tasks (%s)", cr.Name, kind.Name, strings.Join(n.taskRecipes(), ", "))
	}
	np := NewProcess{
		Recipe: cr.Name, Input: task, Parent: parent.ProcessID, Depth: parent.Depth + 1, Owner: parent.Owner,
		inputKind: conversation.KindSystem, inputFrom: "process:" + parent.ProcessID,
	}
	create := func() (string, error) {
		rec, err := n.Create(ctx, np)
		var limit *store.OwnerLimitError
		if errors.As(err, &limit) {
			return "", fmt.Errorf("spawn_worker refused: the user this process works for has the most processes the "+
				"server allows (%d; finished ones count until deleted); do the task yourself", limit.Limit)
		}
		return rec.ID, err
	}
	if parent.CallKey == "" {
		return create()
	}
	np.IdempotencyKey = "spawn:" + parent.ProcessID + "/" + parent.CallKey
	wait := spawnRetryWait
	for attempt := 1; ; attempt++ {
		id, err := create()
		n.cfg.Metrics.redisError(err)
		if err != nil && store.Unavailable(err) && attempt == spawnAttempts {
			return "", fmt.Errorf("spawn_worker: Redis could not be reached just now, so the worker may or may not have "+
				"been started (if it was, its result will reach your inbox): %w", err)
		}
		if err == nil || !store.Unavailable(err) {
			return id, err
		}
		if ctxtime.Sleep(ctx, wait) != nil {
			return "", err
		}
		wait *= 2
	}
}

// spawnAttempts bounds how often Spawn tries a create that Redis could not
// answer; the waits between tries double from spawnRetryWait (1.5 s in
// all, within a lease's time).
const (
	spawnAttempts  = 5
	spawnRetryWait = 100 * time.Millisecond
)

// taskRecipes lists the recipes whose processes spawn_worker can start, or
// says there are none.
func (n *Node) taskRecipes() []string {
	var names []string
	lib := n.Recipes()
	for _, name := range lib.Names() {
		if r, err := lib.Get(name); err == nil {
			if kind, err := n.cfg.Registry.Of(r); err == nil && kind.Tasks(r) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return []string{"none here: do the task yourself"}
	}
	return names
}
