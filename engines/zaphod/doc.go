// Package zaphod runs the turns of a process with several heads: one turn
// asks every head of the recipe (a model and/or a system prompt of its
// own) the same conversation concurrently, each in a bounded round loop
// of its own (engines/rounds), checkpoints each head's answer as it
// arrives, then one synthesis call, shown the heads' answers in the
// recipe's order, composes the turn's answer and ends it with respond,
// as a chat turn ends (engines/chat).
//
// # What the log keeps of a head
//
// Every event of a head has By "head:NAME" (conversation.ByHead), which
// makes it the engine's (conversation.Event.Aside): neither the provider
// view (no later model call is shown it) nor the user view shows it; the
// log, the raw view and the API do. A head's events are checkpointed in
// one step when it has answered or failed: its model usage (the process's
// token budgets count every head), each of its tool calls that got a
// result, with that result, in the order they ran, then its answer, a
// chat_response addressed to the engine alone (AudienceEngine). A head
// that fails (its model, a limit, a panic) ends with a head_failed
// notice, one that its timeout (heads[].timeout) ended with a
// head_timeout notice; either is left out, and the synthesis is shown it
// as failed or timed out. When every head fails the turn ends with a
// model_error notice. The round loops of the heads and of the synthesis
// are given the turn's events without the heads' (a head's tool calls are
// not theirs to resume), with the heads' tokens counted all the same.
//
// A turn resumed after its node stopped asks again only the heads with
// nothing logged; such a head runs its tools again, under the same call
// keys (tools.Caller.CallKey: the turn's id and the head's name, so that
// two heads' calls never share one), which an idempotent tool uses to find
// what it did the first time.
//
// # Order
//
// The log holds the heads in the order they answered: each head's events
// are made durable as soon as it answers, so that a node's crash costs
// only the heads still thinking, and holding an answer back for the
// recipe's order would give that up. Everything that reads the heads
// orders them by the recipe instead: the synthesis's system prompt lists
// them in the recipe's order whatever the order of arrival. The golden
// transcripts (golden_test.go) play every scenario once per order of
// arrival, check that the log holds the heads in that order, and compare
// one golden file that sorts each run of heads' events by the recipe's
// order (each head's own events kept in order) and is strict about every
// other event and about the synthesis's prompt.
//
// # Tools that need approval
//
// A head cannot wait for a person's approval: a call that waits ends its
// turn, and a head does not end the panel's. In a head's pool, a tool
// with `approval` keeps its definition, with a note that heads cannot use
// it, and every call of it gets an error result saying so (NotForHeads);
// the head answers without it. The synthesis is a chat turn with the
// recipe's pool, whose gated calls wait for approval as a chat turn's do.
package zaphod
