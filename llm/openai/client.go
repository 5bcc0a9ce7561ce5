package openai

import (
	"context"
	"errors"
	"iter"
	"net/url"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// Client is a model of one endpoint, spoken to through Chat Completions,
// or through the Responses API when a request asks for hosted tools. It is
// immutable once built and safe for concurrent use.
type Client struct {
	chat      oai.ChatCompletionService
	responses responses.ResponseService
	model     string
	apiKey    string // kept only to remove it from provider messages
	official  bool   // the endpoint is OpenAI's own API
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
		// The services alone, not openai.NewClient: that one reads OPENAI_*
		// variables, and configuration is the caller's.
		chat:      oai.NewChatCompletionService(opts...),
		responses: responses.NewResponseService(opts...),
		model:     cfg.Model,
		apiKey:    cfg.APIKey,
		official:  u.Hostname() == "api.openai.com",
		retry:     cfg.retry(),
		log:       cfg.Logger.Named(name),
	}, nil
}

// Generate streams the model's answer to req: text deltas and fragments of
// tool call arguments as they arrive, then reasoning, tool calls, usage and
// the finish reason (see assembler and responseAssembler). A request with hosted tools goes to the Responses
// API (POST /responses), any other to Chat Completions (POST
// /chat/completions), which compatible servers speak too.
//
// A failed attempt is retried (see provider.Retry.Stream) only while
// nothing of the answer has been yielded: once a text delta has gone out,
// the consumer has part of an answer, and a fresh attempt would produce
// another answer that cannot be joined to it. Tool calls are yielded only
// at the end, and their fragments are progress, no part of the answer
// (llm.Part.Progress), so an answer of tool calls alone is retried
// whenever its stream is cut.
func (c *Client) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		var run provider.Attempt
		var model, api string
		if len(req.Params.HostedTools) > 0 {
			p, err := c.responseParams(req)
			if err != nil {
				yield(llm.Part{}, err)
				return
			}
			model, api = p.Model, "responses"
			run = func() (yielded, stopped bool, err error) {
				open := func(o option.RequestOption) *ssestream.Stream[responses.ResponseStreamEventUnion] {
					return c.responses.NewStreaming(ctx, p, o)
				}
				return attempt(ctx, c, open, &responseAssembler{c: c}, yield)
			}
		} else {
			p, err := c.params(req)
			if err != nil {
				yield(llm.Part{}, err)
				return
			}
			model, api = p.Model, "chat_completions"
			run = func() (yielded, stopped bool, err error) {
				open := func(o option.RequestOption) *ssestream.Stream[oai.ChatCompletionChunk] {
					return c.chat.NewStreaming(ctx, p, o)
				}
				return attempt(ctx, c, open, &assembler{}, yield)
			}
		}
		c.retry.Stream(ctx, c.log, run, yield, zap.String("model", model), zap.String("api", api))
	}
}

// decoder turns the events of one streamed answer into parts; each API has
// its own (assembler, responseAssembler), and a fresh one serves each
// attempt.
type decoder[E any] interface {
	// add takes one event and returns the parts it completes, in order, or
	// the failure the event reports.
	add(ev *E) ([]llm.Part, error)
	// finished reports whether the provider said the answer ended: only then
	// is it whole.
	finished() bool
	// end returns the parts that close a finished answer.
	end() []llm.Part
}

// attempt makes one streamed call through open, yielding the parts d makes
// of its events. It reports whether any part of the answer was yielded,
// whether the consumer stopped the stream, and why the attempt failed.
func attempt[E any](ctx context.Context, c *Client, open func(option.RequestOption) *ssestream.Stream[E], d decoder[E], yield func(llm.Part, error) bool) (yielded, stopped bool, err error) {
	// The middleware keeps the HTTP status, headers and the start of an
	// error body: the SDK's error loses them when the body is not OpenAI's
	// JSON (a proxy's page, {"error": "text"} of compatible servers).
	var res provider.Response
	stream := open(option.WithMiddleware(res.Middleware))
	defer func() { _ = stream.Close() }()

	for stream.Next() {
		ev := stream.Current()
		parts, err := d.add(&ev)
		for _, p := range parts {
			yielded = yielded || !p.Progress()
			if !yield(p, nil) {
				return yielded, true, nil
			}
		}
		if err != nil {
			return yielded, false, err
		}
	}
	if err := stream.Err(); err != nil {
		switch {
		case ctx.Err() != nil:
			return yielded, false, ctx.Err()
		case res.Failed != nil:
			return yielded, false, c.statusError(res.Failed.StatusCode, res.Failed.Header, res.Body, c.retry.Now())
		case d.finished():
			// The answer was whole; only what follows it (the usage chunk)
			// was lost. Keep the answer.
		default:
			return yielded, false, c.classify(err, res.Answered)
		}
	} else if !d.finished() {
		return yielded, false, c.unavailable("the stream ended before the model finished its answer", nil)
	}
	for _, p := range d.end() {
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
	return provider.StreamFailure(name, c.apiKey, err, answered, "a chunk")
}
