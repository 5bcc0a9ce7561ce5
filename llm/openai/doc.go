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
//     deltas and emitted whole at the end, usage, the finish reason;
//   - responses.go maps a request with hosted tools to a Responses API
//     request (store=false, so every request carries the whole
//     conversation): the system prompt as instructions, user and system
//     messages as input messages, assistant text as output messages, tool
//     calls and results as function_call and function_call_output items,
//     reasoning this adapter received from the Responses API as reasoning
//     items with their encrypted content (other reasoning is not sent),
//     function tools (not strict) and the hosted web_search tool;
//   - responses_stream.go turns the typed events of a Responses API stream
//     into parts: text deltas, reasoning summaries with the encrypted
//     content kept in a conversation.ProviderPayload (provider "openai",
//     format "reasoning") for replay, web searches as hosted activity
//     (started, then completed or failed), function calls, usage with the
//     completed searches counted in Usage.Hosted, the finish reason;
//     response.failed and error events become errors of the classes below;
//   - responses_citation.go turns url_citation annotations into citations,
//     converting OpenAI's character offsets into a text part to byte
//     offsets into the whole answer;
//   - error.go classifies failures into the sentinels shared with the other
//     adapters (ErrBadRequest, ErrAuth, ErrRateLimited, ErrUnavailable, from
//     llm/provider) with the provider's message and never the API key;
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
// The package knows llm and conversation types and the SDK; nothing of
// recipes, Redis or the engines. It reads no environment variables: the
// caller passes the key and base URL in Config.
package openai
