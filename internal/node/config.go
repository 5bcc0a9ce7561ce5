package node

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/engines/vogon"
	"github.com/engine-brain/brain/engines/worker"
	"github.com/engine-brain/brain/engines/zaphod"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// Config configures a Node. Zero values take the defaults named below.
type Config struct {
	// Redis is shared by every node. Required.
	Redis redis.UniversalClient
	// NodeID names the node in leases and logs; hostname-pid-random when empty.
	NodeID string
	// Concurrency is the most turns the node runs at once (default 8):
	// that many worker goroutines run them, for the node's life.
	Concurrency int
	// LeaseTTL is how long a node owns a process without renewing it; a
	// dead node's processes are taken over after it (default 10s).
	LeaseTTL time.Duration
	// Recipes are the recipes processes can be created from (default: the
	// built-in recipes).
	Recipes *recipes.Library
	// Models maps a recipe's model.provider to a model. Recipes naming
	// "default" use Models["default"]. Required unless ResolveModel is set
	// (exactly one of the two).
	Models map[string]llm.Model
	// ResolveModel, when set, resolves every recipe's model instead of
	// Models: it sees the whole model section, so it can honour a recipe's
	// base_url. The brain serve command resolves configured providers
	// through it; Models suits tests and fixed sets of models.
	ResolveModel ModelResolver
	// Tools adds tools (or replaces built-ins) that recipes can name, on top
	// of the built-in tools.
	Tools tools.Catalog
	// Registry holds the engine kinds recipes may name (default: chat and
	// worker, stamped by Clock); the recipe's engine kind picks the engine
	// of each process's turns. See package engines for adding a kind.
	Registry *engines.Registry
	// Engines limits the node to some of the Registry's kinds; empty means
	// all. Wakes of other kinds wait for a node that runs them.
	Engines []string
	// Partitions is the number of partitions of the deployment's keys
	// (default store.DefaultPartitions), set when its Redis is first used:
	// a node configured for another number refuses to start
	// (store.Config.Partitions).
	Partitions int
	// AffinityWait is how long a wake waits for its home node (the node
	// its wake stream is home to, store.HomeStreams) before a node with a
	// free slot takes it (default DefaultAffinityWait; negative: no affinity, every node
	// takes any wake at once). A process's wakes then keep reaching the
	// node that ran its last turn and keeps its log, so that its claims
	// read only what is new, while that node has room for them.
	AffinityWait time.Duration
	// HistoryCache is how many processes' logs the node keeps in memory,
	// with what the model is shown of them, so that a turn reads and
	// converts only the new part of its log (default 1024; -1 keeps none).
	// More processes than that work too, at the cost of reading their
	// logs back (as far as a model call is shown) more often.
	HistoryCache int
	// HistoryBytes bounds the memory of those logs (default 256 MiB, as
	// conversation.Event.Size counts it; the provider views share their
	// text): long conversations make the node keep fewer of them, and a
	// log larger than the bound is read back every turn.
	HistoryBytes int
	// RetainFinished, when set, is how long DONE and FAILED processes are
	// kept after they last changed: the node deletes older ones, with
	// their conversations (store.DeleteFinished), when it starts and then
	// every RetainFinished/4 (at least a minute apart, at most an hour).
	// Zero keeps them for good.
	RetainFinished time.Duration
	// InboxLimit is the most messages a process's inbox holds (default
	// store.DefaultInboxLimit, 1000; -1: no limit): beyond it, user and
	// operator messages are refused with store.ErrInboxFull (the API's 429
	// inbox_full) and timer ticks dropped. A worker's result is never
	// refused, nor a message that wakes a BLOCKED process
	// (store.Config.InboxLimit). Nodes sharing a Redis should agree on it.
	InboxLimit int
	// WaitReplicas, when more than 0, makes every write to Redis wait
	// until that many replicas have it (store.Config.WaitReplicas, up to a
	// second): a message answered, a checkpoint taken or a turn committed
	// then survives a failover. A write the replicas do not take in time
	// fails as when Redis is unavailable (the API answers 503; a turn is
	// recovered from its last checkpoint).
	WaitReplicas int
	// OwnerLimit, when more than 0, is the most processes one owner may
	// have, workers and finished ones included until they are deleted
	// (store.Config.OwnerLimit): Create beyond it returns an error
	// matching store.ErrOwnerLimit. Nodes sharing a Redis should agree on
	// it.
	OwnerLimit int
	// MaxLogEvents is the most events a process's log keeps in Redis when
	// its recipe's limits.max_log_events says nothing (see
	// store.Claim.KeepEvents): 0, the default, keeps every event; else at
	// least recipes.MinLogEvents.
	MaxLogEvents int
	// Grace is how long Stop lets running turns finish (default 10s).
	Grace time.Duration
	// Logger receives the node's logs (default: none).
	Logger *zap.Logger
	// Clock stamps events and decides when timers are due (default time.Now).
	Clock func() time.Time
	// Metrics, when set, receives the node's measurements (see NewMetrics).
	Metrics *Metrics
	// TracerProvider makes the spans of turns (invoke_agent), model calls
	// (chat) and tool calls (execute_tool), after OpenTelemetry's GenAI
	// conventions (default: otel.GetTracerProvider(), a no-op unless the
	// program installed an SDK).
	TracerProvider trace.TracerProvider
	// MeterProvider records the GenAI client metrics of model calls,
	// gen_ai.client.operation.duration and gen_ai.client.token.usage
	// (default: otel.GetMeterProvider()).
	MeterProvider metric.MeterProvider
	// CaptureMessageContent puts what model calls were sent and answered
	// on their spans (gen_ai.system_instructions, gen_ai.input.messages,
	// gen_ai.output.messages): users' words then reach the trace backend.
	// Off by default; brain serve turns it on with
	// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
	CaptureMessageContent bool
	// OnCommit, when set, is called after every turn this node commits, with
	// the process's record and the turn's events (the demo prints them; tests
	// wait on them). It runs on the turn's goroutine: keep it short.
	OnCommit func(rec store.Record, events []conversation.Event)
}

// DefaultAffinityWait is Config.AffinityWait when zero: a small part of a
// turn's time, long enough for a node between two reads of its streams.
const DefaultAffinityWait = 25 * time.Millisecond

// ModelResolver returns the model that runs the turns of a recipe whose
// model section is m (m.Provider may be empty or "default": the first
// configured provider). It is called at the start of every turn, from many
// goroutines at once, so it must be safe for concurrent use and cheap:
// cache what it builds. An error fails the turn with the error's message.
type ModelResolver func(m recipes.Model) (llm.Model, error)

// DefaultEngines returns the built-in engine kinds, chat, worker, vogon and zaphod, their
// events stamped by clock: Config.Registry when none is given.
func DefaultEngines(clock func() time.Time) *engines.Registry {
	r, err := engines.NewRegistry(chat.Kind(clock), worker.Kind(clock), vogon.Kind(clock), zaphod.Kind(clock))
	if err != nil {
		panic(err) // the built-in kinds have distinct, valid names
	}
	return r
}

func (c *Config) setDefaults() {
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.NodeID == "" {
		host, _ := os.Hostname()
		c.NodeID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), rand.Text()[:6])
	}
	if c.Concurrency == 0 {
		c.Concurrency = 8
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 10 * time.Second
	}
	if c.Recipes == nil {
		c.Recipes = recipes.Builtin()
	}
	if c.Registry == nil {
		c.Registry = DefaultEngines(c.Clock)
	}
	if len(c.Engines) == 0 {
		c.Engines = c.Registry.Names()
	}
	if c.AffinityWait == 0 {
		c.AffinityWait = DefaultAffinityWait
	}
	if c.HistoryCache == 0 {
		c.HistoryCache = 1024
	}
	if c.InboxLimit == 0 {
		c.InboxLimit = store.DefaultInboxLimit
	}
	if c.HistoryBytes == 0 {
		c.HistoryBytes = 256 << 20
	}
	if c.Grace == 0 {
		c.Grace = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.TracerProvider == nil {
		c.TracerProvider = otel.GetTracerProvider()
	}
	if c.MeterProvider == nil {
		c.MeterProvider = otel.GetMeterProvider()
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Redis == nil {
		errs = append(errs, errors.New("Redis: required"))
	}
	switch {
	case len(c.Models) == 0 && c.ResolveModel == nil:
		errs = append(errs, errors.New("Models: required: map each provider name recipes use (at least \"default\") to a model, or set ResolveModel"))
	case len(c.Models) > 0 && c.ResolveModel != nil:
		errs = append(errs, errors.New("Models and ResolveModel: set one, not both"))
	}
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("Concurrency: must be at least 1 (got %d)", c.Concurrency))
	}
	if c.HistoryBytes < 0 {
		errs = append(errs, fmt.Errorf("HistoryBytes: must be positive (got %d); set HistoryCache to -1 to keep no logs", c.HistoryBytes))
	}
	if c.RetainFinished < 0 {
		errs = append(errs, fmt.Errorf("RetainFinished: must not be negative (got %s); 0 keeps finished processes", c.RetainFinished))
	}
	if c.OwnerLimit < 0 {
		errs = append(errs, fmt.Errorf("OwnerLimit: must not be negative (got %d); 0 is no limit", c.OwnerLimit))
	}
	if c.WaitReplicas < 0 {
		errs = append(errs, fmt.Errorf("WaitReplicas: must not be negative (got %d); 0 waits for none", c.WaitReplicas))
	}
	if c.MaxLogEvents != 0 && (c.MaxLogEvents < recipes.MinLogEvents || c.MaxLogEvents > recipes.MaxLogEvents) {
		errs = append(errs, fmt.Errorf("MaxLogEvents: must be 0 (keep every event) or between %d and %d (got %d)",
			recipes.MinLogEvents, recipes.MaxLogEvents, c.MaxLogEvents))
	}
	if c.LeaseTTL < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("LeaseTTL: must be at least 100ms (got %s)", c.LeaseTTL))
	}
	for _, e := range c.Engines {
		if _, ok := c.Registry.Get(recipes.Engine(e)); !ok {
			errs = append(errs, fmt.Errorf("Engines: unknown engine %q; want one of %s", e, strings.Join(c.Registry.Names(), ", ")))
		}
	}
	if err := c.Registry.Check(c.Recipes); err != nil {
		errs = append(errs, fmt.Errorf("Recipes: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("brain: invalid config: %w", err)
	}
	return nil
}
