package recipes

import (
	"fmt"

	"github.com/engine-brain/brain/tools"
)

// resultSchema checks result_schema: a worker's, with finish_task ending
// its task, and a JSON Schema that compiles (the compiler's message, at the
// field).
func (c *checker) resultSchema() {
	n := c.find("result_schema")
	if n == nil || c.r.ResultSchema == nil {
		return
	}
	const path = "result_schema"
	switch {
	case c.r.EngineKind() != EngineWorker:
		c.at(c.key(path), path, fmt.Sprintf("only a worker's result is checked against a schema (finish_task's result); "+
			"remove result_schema, or set `engine: worker` (got engine `%s`)", c.r.EngineKind()))
		return
	case c.r.TurnEndMode() != TurnEndFinishTask:
		c.at(c.key(path), path, fmt.Sprintf("result_schema checks the result of finish_task, but with `turn_end: %s` the task ends without it; "+
			"set `turn_end: finish_task` (the worker default), or remove result_schema", c.r.TurnEndMode()))
		return
	}
	if _, err := tools.CompileResultSchema(c.r.ResultSchema); err != nil {
		c.at(n, path, "is "+err.Error())
	}
}
