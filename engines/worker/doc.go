// Package worker runs the turns of worker processes: a task handed over by
// a parent process (spawn_worker), ended by a lone finish_task call whose
// result reaches the parent's inbox. In the natural mode (turn_end:
// natural) the model's final text is the result: a worker never ends
// silent. The round loop is the one every engine shares (engines/rounds).
//
// # Results with a schema
//
// A recipe's result_schema (a JSON Schema) is the shape of the task's
// result: a finish_task result with status done (or a result given as free
// text) must be JSON that matches it (one Markdown code fence around it is
// allowed). One that does not is refused: the call's error result lists
// the validator's errors, each at the JSON Pointer of the result it is
// about, and the schema, and it counts as a correction (a
// validation_correction event by validator:result_schema), against
// validation.max_corrections whether or not validation is enabled, since
// the parent relies on the shape. Once the corrections are spent the task
// ends with status failed (the process is DONE: the worker finished, its
// task did not), and the parent's report says why, with the worker's last
// result: the parent can decide what to do with it, where a result passed
// on unchecked would break what the schema promised. A result that matches
// reaches the parent's process_event as data (FinishArgs.Data), besides
// its text. A result with status failed is not checked: it says in words
// what stopped the worker.
package worker
