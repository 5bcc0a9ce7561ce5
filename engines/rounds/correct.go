package rounds

import (
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/validators"
)

// Recipe returns the recipe of the turn that is ending.
func (e *Ending) Recipe() *recipes.Recipe { return e.r.t.Recipe }

// Correct counts corr, a correction the contract itself found (a worker's
// result that fails its result_schema), while the correction budget
// (validation.max_corrections) lasts, and records it as the error result
// of call c (when c.ID is set) for the model to act on. It reports false,
// recording nothing, once the budget is spent. Unlike Check it does not
// depend on validation.enabled: a rule of the contract is not a heuristic
// to switch off.
func (e *Ending) Correct(c conversation.ToolCall, corr validators.Correction) bool {
	r := e.r
	if r.corrections >= r.budget {
		return false
	}
	r.corrections++
	r.corrected(c, corr)
	return true
}

// corrected records corr, counted already, as the error result of call c
// (when c.ID is set) for the model to act on, and in the log.
func (r *run) corrected(c conversation.ToolCall, corr validators.Correction) {
	if c.ID != "" {
		r.result(c, tools.ErrorResult("%s", corr.Text))
	}
	r.correct(corr, c.ID)
}
