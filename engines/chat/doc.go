// Package chat runs one turn of a chat process: from the drained inbox
// messages to the lone respond call that decides the process's next
// lifecycle state (ARCHITECTURE.md § Turn protocol).
//
// The engine knows nothing of Redis or HTTP. It is given the recipe, the log
// so far, the drained messages, a model and a tool registry, and a
// Checkpointer through which it makes progress durable after every round.
// It returns the turn's events and the lifecycle event to fire; the caller
// fires it and commits. Nothing is ever decided from the words the model
// wrote: only from which tools it called and with which arguments.
package chat
