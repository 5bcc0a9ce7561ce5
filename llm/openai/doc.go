// Package openai is the llm.Model adapter for OpenAI's API and for servers
// that speak it (Ollama, vLLM, llama.cpp's server, LM Studio), reached
// through a base URL. It is built on github.com/openai/openai-go/v3.
//
// A request goes to one of two APIs of the same endpoint. A plain request
// uses Chat Completions (POST {base}/chat/completions), which every
// compatible server speaks. A request with hosted tools
// (llm.Params.HostedTools, today only "web_search") uses the Responses API
// (POST {base}/responses), the only one where OpenAI runs tools itself. Both
// share the client, the error classes and the retry policy.
//
// The package owns these translations; the retry policy it applies is
// llm/provider's:
//
//   - request.go maps a provider view (llm.Request) to a Chat Completions
//     request: system prompt, user text, assistant text with tool calls, tool
//     results, mid-conversation correction system messages, function tools;
//   - stream.go turns the streamed chunks back into llm parts: text deltas as
//     they arrive, reasoning as one block, tool calls assembled from their
//     deltas (each delta's arguments going out as a fragment as it arrives)
//     and emitted whole at the end, usage, the finish reason;
//   - responses.go maps a request with hosted tools to a Responses API
//     request (store=false, so every request carries the whole
//     conversation): the system prompt as instructions, user and system
//     messages as input messages, assistant messages as the items they came
//     as (responses_replay.go, below), tool results as function_call_output
//     items, function tools (not strict) and the hosted web_search tool;
//   - responses_stream.go turns the typed events of a Responses API stream
//     into parts: text deltas, reasoning summaries, web searches as hosted
//     activity (started, then completed or failed), function calls (their
//     argument deltas as fragments as they arrive, then whole), usage
//     with the completed searches counted in Usage.Hosted, the finish
//     reason; response.failed and error events become errors of the
//     classes below. What the API must get back is kept in payloads (see
//     payload.go and Replay, below);
//   - responses_citation.go turns url_citation annotations into citations,
//     converting OpenAI's character offsets into a text part to byte
//     offsets into the whole answer;
//   - responses_replay.go sends an assistant message back as the input
//     items it came as, from the payloads, which payload.go names, versions
//     and checks;
//   - error.go classifies failures into the sentinels shared with the other
//     adapters (ErrBadRequest, ErrAuth, ErrRateLimited, ErrUnavailable,
//     ErrPayload, from llm/provider) with the provider's message and never
//     the API key;
//   - the retry policy is provider.Retry: 429, 5xx, connection errors,
//     retryable error events and streams cut before anything was yielded are
//     retried with exponential back-off and jitter, honouring Retry-After,
//     bounded by Config.MaxAttempts and the context's deadline. The SDK's own
//     retries are off, so the policy is one place and testable without
//     sleeping.
//
// Event, item, chunk and annotation kinds the adapter does not know are
// skipped, never fatal.
//
// # Replay
//
// With nothing stored on OpenAI's side, the Responses API must be sent back
// what it wrote. Each object it must get back is kept as it came, in a
// conversation.ProviderPayload of provider "openai" whose Format is the
// object's type and whose Version names the contract it was made under:
//
//	format           kept on                               version
//	reasoning        reasoning whose item has its          "responses.item.v1" (or none:
//	                 encrypted_content                     {"id", "encrypted_content"})
//	web_search_call  a search's final state, from its item "responses.item.v1"
//	url_citation     a citation with a range               "responses.annotation.v1"
//
// An assistant message goes back, on the Responses path, as its reasoning
// items, its text as output messages with each web_search_call item where
// it came in the text (the state's TextAt), the annotations of each part
// counted in its characters, then its function calls. Items go back as
// they came; an annotation too, its offsets counted again in the text it
// is sent with (the same ones when that text is the one it came in).
// Reasoning goes first because the log does not keep where it came among
// the searches. Another provider's payloads mean nothing to OpenAI: they
// are left out and the text goes alone. A payload of this adapter that
// does not decode, or of a format or version it does not continue, is
// refused before anything is sent (ErrPayload, naming its place, e.g.
// messages[3].reasoning[0], the format and the versions it knows): sent
// without it, the conversation would not be the one the API wrote.
//
// Chat Completions takes none of these objects: a request without hosted
// tools sends the text alone and does not read the payloads. The Responses
// API has no paused answer (Anthropic's pause_turn): a response ends
// completed or incomplete, its searches run within it.
//
// The package knows llm and conversation types and the SDK; nothing of
// recipes, Redis or the engines. It reads no environment variables: the
// caller passes the key and base URL in Config.
package openai
