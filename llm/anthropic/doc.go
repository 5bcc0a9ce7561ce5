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
//     user text prefixed "[system] ", and the hosted tools of
//     llm.Params.HostedTools as server tools (hosted.go); replay.go maps an
//     assistant message back to the blocks Anthropic sent (see Replay);
//   - stream.go turns the event stream back into llm parts: text deltas as
//     they arrive, each thinking block (with its signature) and each
//     redacted_thinking block as one reasoning part, web searches as hosted
//     activity, citations of text blocks, tool calls assembled from their
//     input_json_delta events (each going out as a fragment as it arrives)
//     and sent whole at the end, usage, the finish reason. Block, delta and event kinds it does not know (other server
//     tools and their results, newer kinds) are skipped, never fatal;
//     pause.go continues an answer the API paused (see Paused answers);
//   - error.go classifies failures into the sentinels shared with the other
//     adapters (ErrBadRequest, ErrAuth, ErrRateLimited, ErrUnavailable,
//     ErrPayload, from llm/provider) with the provider's message and never
//     the API key;
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
// stops. Each carries its block as received in a payload (payload.go):
// {anthropic, server_tool_use} for the start (its input assembled),
// {anthropic, web_search_tool_result} for the end. The result's
// encrypted_content is meaningful to Anthropic alone, and it holds web
// content that is never rendered or logged.
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
// {anthropic, redacted_thinking} holds its data as a JSON string.
//
// # Replay
//
// An assistant message of the provider view goes back to Anthropic as the
// blocks it sent, in their order: reasoning first (signed thinking as
// thinking, redacted_thinking payloads as redacted_thinking), then the
// text cut where each web search sat (HostedActivity.TextAt) and where each
// cited span starts and ends, with each search's server_tool_use and
// web_search_tool_result blocks in its place and each cited text block
// carrying its citations, then the tool calls as tool_use blocks. Payloads
// go out as they were stored, not rebuilt. A search goes back only whole,
// both payloads present (the API refuses a server_tool_use without its
// result): one cut before it ended, or logged before its start carried a
// payload, is left out, and the text tells of it.
//
// Only Anthropic's payloads are sent back: hosted activity, citations and
// reasoning of another provider (a conversation switched here) are not,
// and the message goes as its text, one text block. Formats this adapter
// does not write are left out the same way.
//
// # Versions and refusals
//
// Every payload records the wire contract it was made under
// (ProviderPayload.Version): web_search_20250305, the web search tool's
// version, for server_tool_use, web_search_tool_result and citation
// payloads; 2026-10-21, the Messages API version this adapter sends as its
// anthropic-version header (pinned, not the SDK's), for redacted_thinking.
// Citation and redacted_thinking payloads logged before versions were
// recorded have none and are taken as today's. A payload of this adapter
// that does not decode as its format's block, or of a version it does not
// know, refuses the whole request before anything is sent, with
// ErrBadRequest and ErrPayload, naming its place (e.g.
// "messages[3].hosted[1]"), its format and why (the versions known, for a
// version): dropping it would send an answer without a part the API needs,
// and the request cannot heal by itself.
//
// # Paused answers
//
// The API pauses a long turn of server tool use with stop_reason
// pause_turn, sometimes in the middle of a search. The adapter continues
// it within the same call: it sends the same request with every block
// received so far, rebuilt as received, as the last assistant message (the
// request's own last assistant message, if any, takes them), and streams
// the next response as more of the same answer: its text offsets and
// citation ranges run on over the whole answer's text, each response's
// usage is its own usage part (llm.Collect sums them), and one finish
// reason ends the whole. A continuation that fails before any of its parts
// went out is retried like a first attempt. At most 5 continuations
// (maxContinuations) are made; a sixth pause ends the answer with
// FinishLength, as max_tokens would: a bound cut it, what arrived is kept,
// and a search it left unanswered is not sent back later. A paused
// response with tool calls (not expected: those end with tool_use) ends
// the answer for them.
//
// The package knows llm and conversation types and the SDK; nothing of
// recipes, Redis or the engines. It reads no environment variables: the
// caller passes the key and base URL in Config.
package anthropic
