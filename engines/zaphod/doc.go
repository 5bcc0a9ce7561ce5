// Package zaphod runs the turns of a process with several heads: one turn
// asks every head of the recipe (a model and/or a system prompt of its
// own) the same conversation concurrently, each in a bounded round loop
// of its own (engines/rounds), checkpoints each head's answer as it
// arrives, then one synthesis call, shown the heads' answers in the
// recipe's order, composes the turn's answer and ends it with respond,
// as a chat turn ends (engines/chat).
//
// A head's answer is logged as a chat_response addressed to the engine
// alone (AudienceEngine, By "head:NAME"): neither the user nor later model
// calls are shown it; its model_usage events are logged too, so that the
// process's token budgets count every head. A head that fails (its model,
// a limit, its timeout) is logged as a head_failed notice, left out, and
// the synthesis is told; when every head fails the turn ends with a
// model_error notice. A turn resumed after its node stopped asks only the
// heads with nothing logged. A head's own tool calls and results stay out
// of the log: they would show up in every later model call; a head asked
// again runs them again.
package zaphod
