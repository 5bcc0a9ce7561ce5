// Package worker runs the turns of worker processes: a task handed over by
// a parent process (spawn_worker), ended by a lone finish_task call whose
// result reaches the parent's inbox. In the natural mode (turn_end:
// natural) the model's final text is the result: a worker never ends
// silent. The round loop is the one every engine shares (engines/rounds).
package worker
