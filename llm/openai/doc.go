// Package openai is the llm.Model adapter for OpenAI's Chat Completions API
// and for servers that speak it (Ollama, vLLM, llama.cpp's server, LM Studio),
// reached through a base URL. It is built on github.com/openai/openai-go/v3.
//
// The package owns three translations; the retry policy it applies is
// llm/provider's:
//
//   - request.go maps a provider view (llm.Request) to a Chat Completions
//     request: system prompt, user text, assistant text with tool calls, tool
//     results, mid-conversation correction system messages, function tools;
//   - stream.go turns the streamed chunks back into llm parts: text deltas as
//     they arrive, reasoning as one block, tool calls assembled from their
//     deltas and emitted whole at the end, usage, the finish reason;
//   - error.go classifies failures into the sentinels shared with the other
//     adapters (ErrBadRequest, ErrAuth, ErrRateLimited, ErrUnavailable, from
//     llm/provider) with the provider's message and never the API key;
//   - the retry policy is provider.Retry: 429, 5xx, connection errors and
//     streams cut before anything was yielded are retried with exponential
//     back-off and jitter, honouring Retry-After, bounded by
//     Config.MaxAttempts and the context's deadline. The SDK's own retries
//     are off, so the policy is one place and testable without sleeping.
//
// The Responses API and hosted tools (web search, citations) are not here
// yet: a request asking for hosted tools fails with ErrBadRequest rather than
// silently running without them.
//
// The package knows llm and conversation types and the SDK; nothing of
// recipes, Redis or the engines. It reads no environment variables: the
// caller passes the key and base URL in Config.
package openai
