// Package vogon is the engine of gated pipelines: a recipe's phases run in
// order, each with its own prompt and tools, on the shared round loop
// (engines/rounds). The model ends a phase with phase_done {result}; the
// result must validate against the phase's gate schema (a failure is the
// call's error result, within the recipe's correction budget; once it is
// spent, the phase's on_fail retries it, goes back to an earlier phase or
// fails the process). The result is handed to the next phases' prompts.
// A phase that on_fail's back_to returns to is shown its own earlier result
// and the error results of the phase that sent the pipeline back.
//
// A phase with approval (operator or user) holds a result that passed its
// gate until a person decides, through the tool approvals of the round loop
// (rounds.Ending.Await, rounds.Decider): the phase_done call waits as a
// gated tool's call does, the process BLOCKED, waiting for approval. An
// approval passes the phase; a rejection is phase_done's error result, with
// the reason (Rejected), and the phase goes on: the model reworks its
// result and calls phase_done again, which waits again. A rejection is not
// a gate failure and spends no correction.
//
// A chat-like vogon (turn_end: respond, the default) whose pool has respond
// offers it in every phase (rounds.Endings): a lone respond goes to the
// user and does not end the phase: with awaiting_user_input the turn ends
// and the process waits for the user, whose message goes on in the same
// phase; without, the phase goes on at once.
//
// The phases live in the log, nowhere else: every move is a phase_change
// event (the newest one's To is the current phase; the newest change that
// left a phase done holds its result), committed with the rounds, so a
// turn resumed after its node stopped goes on in its phase, with the
// earlier phases' results. The last phase's result ends the turn: as a chat
// answer (the process waits for the user; the next message starts the
// pipeline again) or, under turn_end: finish_task, as the task's result: a
// worker-like vogon is a task kind (engines.Kind.TaskOf), which
// spawn_worker starts, and whose result reaches the parent (a result that
// is not a JSON string also as data).
package vogon
