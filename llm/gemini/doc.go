// Package gemini is the llm.Model adapter for Google's Gemini API
// (generativelanguage.googleapis.com), streamed. It is built on the official
// SDK, google.golang.org/genai: Models.GenerateContentStream, which posts to
// {base}/v1beta/models/{model}:streamGenerateContent?alt=sse with the key in
// x-goog-api-key. It mirrors llm/anthropic's design.
//
// The SDK makes the HTTP request. Its errors keep the status but not the
// headers (Retry-After) nor a proxy's error page, and it reports a cut
// stream like any other error, so the package gives the SDK a copy of the
// caller's http.Client whose transport records each attempt's response
// (transport.go): the status, headers and start of an error body, and the
// read error of a cut 2xx body. The SDK's own retries and its automatic
// continuation of cut streams are off, and every setting it would read from
// GOOGLE_* and GEMINI_* variables is given explicitly.
//
// The package owns these translations; the retry policy it applies is
// llm/provider's:
//
//   - request.go maps a provider view (llm.Request) to contents: the system
//     prompt as systemInstruction, user and "model" turns (consecutive
//     messages of one role merged), tool calls as functionCall parts with
//     their ids, tool results as functionResponse parts ({"output"} or
//     {"error"}) first in their user turn, mid-conversation corrections as
//     user text prefixed "[system] ", tools as functionDeclarations with
//     parametersJsonSchema, and the hosted web_search as the googleSearch
//     tool (any other hosted tool is refused before sending);
//   - stream.go turns the chunks back into llm parts: text as it arrives,
//     thought parts as one reasoning part per block, function calls (sent
//     whole by Gemini, so with no llm.PartToolArgs fragments before them)
//     at the end with a stable id (Gemini's, else
//     "call_<response id>_<n>"), usage, the finish reason. Part kinds it
//     does not know are skipped;
//   - grounding.go turns a search's grounding metadata into a hosted
//     web_search activity (started, then completed: Gemini reports the
//     search only with the answer), citations whose ranges are byte spans
//     of the collected text (Gemini's segment offsets are UTF-8 bytes), and
//     Usage.Hosted["web_search"], the number of queries;
//   - signature.go keeps Gemini's thought signatures in provider payloads
//     {Provider: "gemini", Format: "thought_signature", Version: "v1beta",
//     Value: a base64 JSON string}: on the tool call or the reasoning they
//     came with, or, for a signature on answer text, on a reasoning entry
//     without text. They are the adapter's only payloads (see Replay);
//   - error.go classifies failures into the sentinels shared with the other
//     adapters (ErrBadRequest, ErrAuth, ErrRateLimited, ErrUnavailable, from
//     llm/provider; ErrPayload, see Replay), from Google's error object (a 400 API_KEY_INVALID is
//     ErrAuth), with the provider's message and never the API key;
//   - the retry policy is provider.Retry: 429, 5xx, 503 "overloaded", error
//     objects of those kinds in the stream, connection errors and streams
//     cut or garbled before anything was yielded are retried with
//     exponential back-off and jitter, honouring Retry-After (or the
//     retryDelay of Google's RetryInfo), bounded by Config.MaxAttempts and
//     the context's deadline.
//
// # Replay
//
// What goes back to Gemini of an earlier answer, natively:
//
//   - thought signatures, byte for byte, in thoughtSignature on the part
//     they came with: a thought part (with its text), a functionCall part,
//     or the answer's text part;
//   - the text, tool calls and tool results, as every provider gets them.
//
// Nothing else goes back. Another provider's payloads are not sent, nor
// reasoning without a Gemini signature (Gemini reads nothing from it): the
// answer's text stands for them. A search cannot go back natively: Gemini
// reports it in the candidate's groundingMetadata, beside the content, and
// no field of a request's Content or Part takes grounding metadata or
// search results (partMetadata is free-form, for a client's own
// bookkeeping). Its text is what the next request holds, the citations
// only as the text they cite; the hosted activity and citations of a
// search carry no payload. (The API's server-side tool invocations,
// toolCall and toolResponse parts a client echoes back, come only when a
// request sets toolConfig.includeServerSideToolInvocations, which this
// adapter does not.)
//
// Gemini has no equivalent of Anthropic's pause_turn: a search runs inside
// the one streamGenerateContent call, and every answer ends with its
// finishReason; the adapter never continues an answer.
//
// Every payload records its wire contract in Version, today "v1beta" (the
// API version whose thoughtSignature it fills). A payload without a
// version was logged before versions were recorded, under that same
// contract, and is taken as v1beta. A Gemini payload the adapter cannot
// send back as it came is refused before anything is sent, with
// ErrBadRequest and ErrPayload and an error that names its place, format
// and fault, e.g. "gemini: request refused: messages[3].tool_calls[0]: a
// gemini thought_signature payload of version "v2", which this adapter
// cannot continue (it continues "v1beta" ...)": a version other than
// v1beta, a format other than thought_signature, a value that is not a
// base64 string. Dropping it instead would send Gemini a conversation
// without what it asked to get back, refused or answered worse far from
// the cause.
//
// The package knows llm and conversation types and the SDK; nothing of
// recipes, Redis or the engines. It reads no environment variables: the
// caller passes the key and base URL in Config.
package gemini
