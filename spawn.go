package brain

import (
	"context"
	"fmt"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
)

var _ tools.Spawner = (*Node)(nil)

// Spawn creates a worker process for the spawn_worker tool: recipe runs
// task for parent, and its result reaches parent's inbox as a process_event.
// The worker works for the parent's owner, who sees it as her own process.
// The parent recipe's limits.max_depth bounds how deep workers nest.
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
	rec, err := n.Create(ctx, NewProcess{
		Recipe: cr.Name, Input: task, Parent: parent.ProcessID, Depth: parent.Depth + 1, Owner: parent.Owner,
		inputKind: conversation.KindSystem, inputFrom: "process:" + parent.ProcessID,
	})
	if err != nil {
		return "", err
	}
	return rec.ID, nil
}
