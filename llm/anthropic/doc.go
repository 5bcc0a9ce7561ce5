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
//     user text prefixed "[system] ", assistant tool calls as tool_use
//     blocks, reasoning replayed as thinking blocks with their signatures
//     or as redacted_thinking blocks with their data (payload.go), and the
//     hosted tools of llm.Params.HostedTools as server tools (hosted.go);
//   - stream.go turns the event stream back into llm parts: text deltas as
//     they arrive, each thinking block (with its signature) and each
//     redacted_thinking block as one reasoning part, web searches as hosted
//     activity, citations of text blocks, tool calls assembled from their
//     input_json_delta events and sent whole at the end, usage, the finish
//     reason. Block, delta and event kinds it does not know (other server
//     tools and their results, newer kinds) are skipped, never fatal;
//   - error.go classifies failures into the sentinels shared with the other
//     adapters (ErrBadRequest, ErrAuth, ErrRateLimited, ErrUnavailable, from
//     llm/provider) with the provider's message and never the API key;
//   - the retry policy is provider.Retry: 429, 5xx, 529 "overloaded", error
//     events of those kinds, connection errors and streams cut before
//     anything was yielded are retried with exponential back-off and jitter,
//     honouring Retry-After, bounded by Config.MaxAttempts and the context's
//     deadline. The SDK's own retries are off.
//
// # Hosted web search
//
// "web_search" is the one hosted tool (model.hosted_tools) this adapter
// knows; it asks for the server tool web_search_20250305. Any other name is
// refused with ErrBadRequest before anything is sent, as is a function tool
// of the same name. A search streams as a server_tool_use block (its query
// in input_json_delta events) and a web_search_tool_result block; they
// become llm.PartHosted parts under the server tool's id: started, with the
// query as Input, when the first block stops; completed ("3 results") or
// failed (the error code, e.g. "max_uses_exceeded") when the result block
// stops. The terminal state carries the result block exactly as sent in a
// conversation.ProviderPayload {anthropic, web_search_tool_result,
// web_search_20250305}: its encrypted_content is meaningful to Anthropic
// alone, and it holds web content that is never rendered or logged.
// usage.server_tool_use.web_search_requests becomes Usage.Hosted["web_search"].
//
// # Citations
//
// Anthropic cites a whole text block, in content_block_start's citations or
// in citations_delta events. Each web_search_result_location becomes an
// llm.PartCitation (source URL and title, cited_text as the excerpt, the
// citation as sent in a {anthropic, citation} payload for replay), sent
// when its block stops, with Range the block's byte span of the answer's
// text as collected (every text part joined). When a stream breaks after
// text went out, the citations of the block it cut go out before the error,
// anchored to the text sent. Citations of documents (char, page and content
// block locations), which this adapter never sends, are skipped.
//
// # Redacted thinking
//
// A redacted_thinking block becomes reasoning without text whose payload
// {anthropic, redacted_thinking} holds its data as a JSON string; it is
// replayed as a redacted_thinking block. Reasoning carrying another
// provider's payload is not replayed, and a redacted_thinking payload that
// does not decode is refused (ErrBadRequest) rather than dropped.
//
// # Not replayed
//
// Hosted activity is not in the provider view (conversation.ProviderView),
// so server_tool_use and web_search_tool_result blocks are not replayed,
// nor are citations: a later turn sends the answer's text without the
// searches behind it. For the same reason a pause_turn stop reason (the
// API paused a long turn of server tool use) ends the answer as a normal
// stop rather than being continued.
//
// The package knows llm and conversation types and the SDK; nothing of
// recipes, Redis or the engines. It reads no environment variables: the
// caller passes the key and base URL in Config.
package anthropic
