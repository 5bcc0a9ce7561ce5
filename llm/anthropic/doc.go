// Package anthropic is the llm.Model adapter for Anthropic's Messages API,
// streamed. It is built on github.com/anthropics/anthropic-sdk-go/v2 and
// mirrors llm/openai's design.
//
// The package owns three translations; the retry policy it applies is
// llm/provider's:
//
//   - request.go maps a provider view (llm.Request) to a Messages request:
//     the system prompt as system, strictly alternating user and assistant
//     turns (consecutive messages of one role merged), tool results as
//     tool_result blocks of a user turn, mid-conversation corrections as
//     user text prefixed "[system] ", assistant tool calls as tool_use blocks
//     and reasoning replayed as thinking blocks with their signatures;
//   - stream.go turns the event stream back into llm parts: text deltas as
//     they arrive, each thinking block (with its signature) as one reasoning
//     part, tool calls assembled from their input_json_delta events and sent
//     whole at the end, usage, the finish reason. Block and event kinds it
//     does not know (server tools, web search results for now) are skipped;
//   - error.go classifies failures into the sentinels shared with the other
//     adapters (ErrBadRequest, ErrAuth, ErrRateLimited, ErrUnavailable, from
//     llm/provider) with the provider's message and never the API key;
//   - the retry policy is provider.Retry: 429, 5xx, 529 "overloaded", error
//     events of those kinds, connection errors and streams cut before
//     anything was yielded are retried with exponential back-off and jitter,
//     honouring Retry-After, bounded by Config.MaxAttempts and the context's
//     deadline. The SDK's own retries are off.
//
// Hosted tools (web search) and citations are not here yet: a request asking
// for hosted tools fails with ErrBadRequest rather than silently running
// without them.
//
// The package knows llm and conversation types and the SDK; nothing of
// recipes, Redis or the engines. It reads no environment variables: the
// caller passes the key and base URL in Config.
package anthropic
