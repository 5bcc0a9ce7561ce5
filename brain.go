package brain

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/internal/node"
)

// The embedding API: a node's configuration, the node, and the values its
// methods take. They are the runtime's own types (internal/node), named
// here so that a Go program needs only this package.
type (
	// Config configures a Node; zero values take the defaults its fields name.
	Config = node.Config
	// Node is one brain node: it takes wakes from the shared queue, runs
	// turns, fires timers and takes over the processes of nodes that died.
	Node = node.Node
	// NewProcess describes a process to create (Node.Create).
	NewProcess = node.NewProcess
	// ModelResolver returns the model that runs the turns of a recipe
	// (Config.ResolveModel).
	ModelResolver = node.ModelResolver
	// Metrics are a node's Prometheus metrics (Config.Metrics).
	Metrics = node.Metrics
)

// DefaultAffinityWait is Config.AffinityWait when zero.
const DefaultAffinityWait = node.DefaultAffinityWait

// ErrIdempotencyKeyReused: Create was given the idempotency key of a
// process of another recipe or parent.
var ErrIdempotencyKeyReused = node.ErrIdempotencyKeyReused

// ErrNotRunning: Node.Watch on a node that is not started, or stopped.
var ErrNotRunning = node.ErrNotRunning

// New builds a node. It does not touch Redis until Start.
func New(cfg Config) (*Node, error) { return node.New(cfg) }

// DefaultEngines returns the built-in engine kinds, chat and worker, their
// events stamped by clock (time.Now when nil): Config.Registry when none is
// given. A deployment with engines of its own registers them beside these
// (engines.NewRegistry; see package engines).
func DefaultEngines(clock func() time.Time) *engines.Registry { return node.DefaultEngines(clock) }

// NewMetrics registers a node's metrics on reg; pass them in
// Config.Metrics.
func NewMetrics(reg prometheus.Registerer) *Metrics { return node.NewMetrics(reg) }
