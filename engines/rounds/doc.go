// Package rounds is the round loop the tool-ending engines share (chat,
// worker): model call, tool calls, results, a checkpoint, the next round;
// the validators' correction loop; the limits (rounds, tokens, the day's
// tokens, the turn's timeout, the context window); resuming a turn whose
// node stopped. Where kinds differ (which tool ends a turn, what free text
// means, what an idle turn leads to) it asks the engine's Contract.
package rounds
