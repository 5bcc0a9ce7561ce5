// Package vogon is the engine of gated pipelines: a recipe's phases run in
// order, each with its own prompt and tools, on the shared round loop
// (engines/rounds). The model ends a phase with phase_done {result}; the
// result must validate against the phase's gate schema (a failure is the
// call's error result, within the recipe's correction budget; once it is
// spent, the phase's on_fail retries it, goes back to an earlier phase or
// fails the process). The result is handed to the next phases' prompts.
//
// The phases live in the log, nowhere else: every move is a phase_change
// event (the newest one's To is the current phase; the newest change that
// left a phase done holds its result), committed with the rounds, so a
// turn resumed after its node stopped goes on in its phase, with the
// earlier phases' results. The last phase's result ends the turn: as a chat
// answer (the process waits for the user; the next message starts the
// pipeline again) or, under turn_end: finish_task, as the task's result.
package vogon
