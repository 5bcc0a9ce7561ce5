package anthropic

import (
	"context"
	"errors"
	"iter"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// Client is a Messages API model. It is immutable once built and safe for
// concurrent use.
type Client struct {
	service   sdk.MessageService
	model     string
	maxTokens int
	apiKey    string // kept only to remove it from provider messages
	retry     provider.Retry
	log       *zap.Logger
}

var _ llm.Model = (*Client)(nil)

// New returns a client for cfg, or the first problem of cfg.
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithAPIKey(cfg.APIKey),
		// The Messages API documents x-api-key; this SDK version sends only
		// a bearer Authorization header, so send the documented one too.
		option.WithHeader("x-api-key", cfg.APIKey),
		// The version payloads record (see apiVersion), not the SDK's.
		option.WithHeader("anthropic-version", apiVersion),
		// The retry policy is ours (provider.Retry): one attempt per SDK call.
		option.WithMaxRetries(0),
	}
	return &Client{
		// The service alone, not anthropic.NewClient: that one reads
		// ANTHROPIC_* variables and profiles, and configuration is the
		// caller's.
		service:   sdk.NewMessageService(opts...),
		model:     cfg.Model,
		maxTokens: cfg.MaxTokens,
		apiKey:    cfg.APIKey,
		retry:     cfg.retry(),
		log:       cfg.Logger.Named(name),
	}, nil
}

// Generate streams the model's answer to req: text deltas and fragments of
// tool call input as they arrive; reasoning blocks, web search states and a
// text block's citations as their blocks end; then tool calls, usage and
// the finish reason (see assembler).
// An answer the API pauses (pause_turn) is continued, at most
// maxContinuations times, as one answer: each response's usage is yielded,
// and one finish reason ends the whole (see pause).
//
// A failed attempt is retried (see provider.Retry.Stream) only while
// nothing of its response has been yielded: once a part has gone out, a
// fresh attempt would produce another answer that cannot be joined to it.
// Tool calls are yielded only at the end, and their fragments are progress,
// no part of the answer (llm.Part.Progress), so an answer of tool calls
// alone is retried whenever its stream is cut; a web search, once reported
// started, is not (the consumer has seen it run). A continuation is
// retried the same way: the paused answer it continues is the same.
func (c *Client) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		params, opts, err := c.params(req)
		if err != nil {
			yield(llm.Part{}, err)
			return
		}
		var p pause
		for {
			var paused *assembler
			next := p.params(params)
			c.retry.Stream(ctx, c.log, func() (yielded, stopped bool, err error) {
				a := p.assembler()
				yielded, stopped, err = c.attempt(ctx, next, opts, a, yield)
				if err == nil && !stopped && a.paused() {
					paused = a
				}
				return yielded, stopped, err
			}, yield, zap.String("model", string(params.Model)))
			if paused == nil {
				return
			}
			p.add(paused)
			c.log.Debug("the model paused its answer; continuing it", zap.String("model", string(params.Model)), zap.Int("continuation", p.n))
		}
	}
}

// attempt makes one streamed call, yielding its parts as a reads them. It
// reports whether any part of the answer was yielded, whether the consumer
// stopped the stream, and why the attempt failed.
func (c *Client) attempt(ctx context.Context, params sdk.MessageNewParams, opts []option.RequestOption, a *assembler, yield func(llm.Part, error) bool) (yielded, stopped bool, err error) {
	// The middleware keeps the HTTP status, headers and the start of an
	// error body, which the SDK's error does not expose as plainly (and a
	// proxy's page is not Anthropic's JSON).
	var res provider.Response
	all := append(opts[:len(opts):len(opts)], option.WithMiddleware(res.Middleware))
	stream := c.service.NewStreaming(ctx, params, all...)
	defer func() { _ = stream.Close() }()

	// fail ends the attempt with err. When parts went out, the citations of
	// a text block the failure cut short go out first: they annotate text
	// the consumer already has (llm.Collect marks them incomplete).
	fail := func(err error) (bool, bool, error) {
		if yielded {
			for _, p := range a.unstopped() {
				if !yield(p, nil) {
					return true, true, nil
				}
			}
		}
		return yielded, false, err
	}
	for stream.Next() {
		ev := stream.Current()
		for _, p := range a.add(&ev) {
			yielded = yielded || !p.Progress()
			if !yield(p, nil) {
				return yielded, true, nil
			}
		}
	}
	if err := stream.Err(); err != nil {
		switch {
		case ctx.Err() != nil:
			return fail(ctx.Err())
		case res.Failed != nil:
			return fail(c.statusError(res.Failed.StatusCode, res.Failed.Header, res.Body, c.retry.Now()))
		case a.finished():
			// The answer was whole; only message_stop was lost. Keep it.
		default:
			return fail(c.classify(err, res.Answered))
		}
	} else if !a.finished() {
		return fail(c.unavailable("the stream ended before the model finished its answer", nil))
	}
	for _, p := range a.end() {
		yielded = true
		if !yield(p, nil) {
			return yielded, true, nil
		}
	}
	return yielded, false, nil
}

// classify turns an error of a 2xx stream (answered) or of a request that
// got no response into an *Error.
func (c *Client) classify(err error, answered bool) *Error {
	var ae *sdk.Error
	if answered && errors.As(err, &ae) {
		return c.streamError(ae)
	}
	return provider.StreamFailure(name, c.apiKey, err, answered, "an event")
}
