// Package conversation owns the append-only event log of one process and the
// two projections read from it.
//
// An [Event] is one record of the log: a turn start, a drained inbox message,
// a model response part, a tool call and its result, a validator's
// correction, a state change, a system notice, a hosted activity or a
// presentation. Tool results are MCP-compatible content [Block] values, each
// optionally addressed to an audience ([RoleUser], [RoleAssistant]); a block
// without an audience is addressed to both.
//
// The log is projected two ways:
//
//   - [ProviderView] is what the model is sent: provider-neutral [Message]
//     values that keep only blocks addressed to the assistant. The llm
//     adapters translate them to their wire formats.
//   - [UserView] is what a person sees: the same events, filtered by the
//     per-family rules of the tell_user design, with tool results reduced to
//     blocks addressed to the user. It is a projection in event shape, not a
//     valid conversation: never feed it back into ProviderView or storage.
//
// The package knows nothing of Redis, HTTP, providers or the lifecycle state
// machine; state changes are recorded as plain strings. It imports only the
// standard library.
package conversation
