// Package provider holds what every provider adapter (llm/openai,
// llm/anthropic) shares: the error classes of a failed call, the retry
// policy and the attempt loop that applies it.
//
// It knows nothing of any provider's wire format or SDK: an adapter turns
// its responses into an *Error, and this package decides whether and when
// to try again.
package provider
