package openai

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/url"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// Client is a Chat Completions model of one endpoint. It is immutable once
// built and safe for concurrent use.
type Client struct {
	service  oai.ChatCompletionService
	model    string
	apiKey   string // kept only to remove it from provider messages
	official bool   // the endpoint is OpenAI's own API
	retry    provider.Retry
	log      *zap.Logger
}

var _ llm.Model = (*Client)(nil)

// New returns a client for cfg, or the first problem of cfg.
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	u, _ := url.Parse(cfg.BaseURL) // validated
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(cfg.HTTPClient),
		// The retry policy is ours (provider.Retry): one attempt per SDK call.
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Client{
		// The service alone, not openai.NewClient: that one reads OPENAI_*
		// variables, and configuration is the caller's.
		service:  oai.NewChatCompletionService(opts...),
		model:    cfg.Model,
		apiKey:   cfg.APIKey,
		official: u.Hostname() == "api.openai.com",
		retry:    cfg.retry(),
		log:      cfg.Logger.Named(name),
	}, nil
}

// Generate streams the model's answer to req: text deltas as they arrive,
// then reasoning, tool calls, usage and the finish reason (see assembler).
//
// A failed attempt is retried (see provider.Retry.Stream) only while
// nothing has been yielded: once a text delta has gone out, the consumer has
// part of an answer, and a fresh attempt would produce another answer that
// cannot be joined to it. Tool calls are yielded only at the end, so an
// answer of tool calls alone is retried whenever its stream is cut.
func (c *Client) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		params, err := c.params(req)
		if err != nil {
			yield(llm.Part{}, err)
			return
		}
		c.retry.Stream(ctx, c.log, func() (yielded, stopped bool, err error) {
			return c.attempt(ctx, params, yield)
		}, yield, zap.String("model", params.Model))
	}
}

// attempt makes one streamed call, yielding its parts. It reports whether
// any part was yielded, whether the consumer stopped the stream, and why the
// attempt failed.
func (c *Client) attempt(ctx context.Context, params oai.ChatCompletionNewParams, yield func(llm.Part, error) bool) (yielded, stopped bool, err error) {
	// The middleware keeps the HTTP status, headers and the start of an
	// error body: the SDK's error loses them when the body is not OpenAI's
	// JSON (a proxy's page, {"error": "text"} of compatible servers).
	var res provider.Response
	stream := c.service.NewStreaming(ctx, params, option.WithMiddleware(res.Middleware))
	defer func() { _ = stream.Close() }()

	var a assembler
	for stream.Next() {
		chunk := stream.Current()
		for _, p := range a.add(&chunk) {
			yielded = true
			if !yield(p, nil) {
				return yielded, true, nil
			}
		}
	}
	if err := stream.Err(); err != nil {
		switch {
		case ctx.Err() != nil:
			return yielded, false, ctx.Err()
		case res.Failed != nil:
			return yielded, false, c.statusError(res.Failed.StatusCode, res.Failed.Header, res.Body, c.retry.Now())
		case a.finished():
			// The answer was whole; only what follows it (the usage chunk)
			// was lost. Keep the answer.
		default:
			return yielded, false, c.classify(err, res.Answered)
		}
	} else if !a.finished() {
		return yielded, false, c.unavailable("the stream ended before the model finished its answer", nil)
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
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return c.streamError(se)
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return c.unavailable("the stream sent a chunk that is not valid JSON", err)
	}
	if answered {
		return c.unavailable("the stream was cut: "+err.Error(), err)
	}
	return c.unavailable("the connection failed: "+err.Error(), err)
}
