package gemini

import (
	"context"
	"fmt"
	"iter"

	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// Client is a Gemini API model. It is immutable once built and safe for
// concurrent use.
type Client struct {
	models    *genai.Models
	model     string
	maxTokens int
	thoughts  bool
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
	// A copy of the caller's client whose transport records each attempt's
	// response (see recorder): the SDK's errors keep neither the headers
	// nor a proxy's error page.
	hc := *cfg.HTTPClient
	hc.Transport = recording{base: cfg.HTTPClient.Transport}
	// Every setting the SDK would otherwise read from GOOGLE_* and GEMINI_*
	// variables is given: configuration is the caller's. The SDK's own
	// retries stay off (no RetryOptions): the policy is ours.
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     cfg.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: &hc,
		HTTPOptions: genai.HTTPOptions{
			BaseURL:    cfg.BaseURL,
			APIVersion: apiVersion,
		},
	})
	if err != nil {
		// The SDK's messages print its whole configuration, key included.
		return nil, fmt.Errorf("gemini: the SDK refused the configuration: %s", provider.Redact(err.Error(), cfg.APIKey))
	}
	return &Client{
		models:    gc.Models,
		model:     cfg.Model,
		maxTokens: cfg.MaxTokens,
		thoughts:  !cfg.OmitThoughts,
		apiKey:    cfg.APIKey,
		retry:     cfg.retry(),
		log:       cfg.Logger.Named(name),
	}, nil
}

// Generate streams the model's answer to req: text deltas as they arrive,
// reasoning blocks as they end, then tool calls, hosted search activity,
// citations, usage and the finish reason (see assembler).
//
// A failed attempt is retried (see provider.Retry.Stream) only while
// nothing has been yielded: once a part has gone out, a fresh attempt would
// produce another answer that cannot be joined to it. Tool calls are
// yielded only at the end, so an answer of tool calls alone is retried
// whenever its stream is cut.
func (c *Client) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		call, err := c.request(req)
		if err != nil {
			yield(llm.Part{}, err)
			return
		}
		c.retry.Stream(ctx, c.log, func() (yielded, stopped bool, err error) {
			return c.attempt(ctx, call, yield)
		}, yield, zap.String("model", call.model))
	}
}

// attempt makes one streamed call, yielding its parts. It reports whether
// any part was yielded, whether the consumer stopped the stream, and why the
// attempt failed.
func (c *Client) attempt(ctx context.Context, call *call, yield func(llm.Part, error) bool) (yielded, stopped bool, err error) {
	rec := &recorder{}
	var a assembler
	var streamErr error
	for resp, err := range c.models.GenerateContentStream(withRecorder(ctx, rec), call.model, call.contents, call.config) {
		if err != nil {
			streamErr = err
			break
		}
		for _, p := range a.add(resp) {
			yielded = true
			if !yield(p, nil) {
				return yielded, true, nil
			}
		}
	}
	switch {
	case streamErr == nil && !a.finished():
		return yielded, false, c.unavailable("the stream ended before the model finished its answer", nil)
	case streamErr == nil:
	case ctx.Err() != nil:
		return yielded, false, ctx.Err()
	case rec.res.Failed != nil:
		return yielded, false, c.statusError(rec.res.Failed.StatusCode, rec.res.Failed.Header, rec.res.Body, c.retry.Now())
	case a.finished():
		// The answer was whole; only the end of the stream was lost. Keep it.
	default:
		return yielded, false, c.classify(streamErr, rec)
	}
	for _, p := range a.end() {
		yielded = true
		if !yield(p, nil) {
			return yielded, true, nil
		}
	}
	return yielded, false, nil
}
