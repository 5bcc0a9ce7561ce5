package provider

import "context"

// retryObserverKey is the context key of a call's retry observer.
type retryObserverKey struct{}

// WithRetryObserver returns ctx with observe called each time the call made
// with ctx is retried (Retry.Stream): with the attempt that failed and its
// error, before the wait. It lets whoever wraps a model count retries per
// call without the adapters knowing of metrics.
func WithRetryObserver(ctx context.Context, observe func(attempt int, err error)) context.Context {
	return context.WithValue(ctx, retryObserverKey{}, observe)
}

// observeRetry tells ctx's retry observer, if any, of a retry.
func observeRetry(ctx context.Context, attempt int, err error) {
	if observe, ok := ctx.Value(retryObserverKey{}).(func(int, error)); ok {
		observe(attempt, err)
	}
}
