package llm

import "errors"

// Sentinels of failed model calls; every error of a failed call wraps one of
// them, or the context's error when the call was cancelled or timed out.
// llm/provider names the same values and its Error reads them with the
// adapter's name, e.g. "openai: rate limited".
var (
	// ErrBadRequest: the provider refused the request (a 4xx other than
	// 401, 403, 408 and 429: unknown model, context too long, bad schema).
	// Not retried.
	ErrBadRequest error = &Failure{"request refused"}
	// ErrAuth: the key is missing, wrong or lacks access (401, 403). Not
	// retried.
	ErrAuth error = &Failure{"authentication failed"}
	// ErrRateLimited: too many requests (429). Retried, unless the
	// failure is permanent (an exhausted quota).
	ErrRateLimited error = &Failure{"rate limited"}
	// ErrUnavailable: the provider failed, is overloaded or could not be
	// reached (5xx, 408, connection errors, a stream cut or garbled
	// mid-way). Retried while nothing of the answer was yielded.
	ErrUnavailable error = &Failure{"provider unavailable"}
	// ErrContextTooLong: an ErrBadRequest that says the request does not
	// fit the model's context window. A shorter view of the conversation
	// may be accepted.
	ErrContextTooLong = errors.New("provider: context too long")
	// ErrPayload: an ErrBadRequest an adapter raises itself, before
	// sending anything, because the conversation holds a payload of its
	// own provider that it cannot send back (it does not decode, or it was
	// made under a wire contract the adapter does not continue). It cannot
	// heal by itself; another provider, which is sent only the portable
	// text, can take the conversation on.
	ErrPayload = errors.New("provider: payload cannot be sent back")
)

// Failure is the kind of a failed model call, one of the sentinels above.
type Failure struct{ text string }

// Error reads like "provider: rate limited".
func (f *Failure) Error() string { return "provider: " + f.text }

// Text is the kind without the package name, e.g. "rate limited"; it goes
// after the adapter's name in a provider.Error.
func (f *Failure) Text() string { return f.text }
