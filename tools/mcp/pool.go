package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/tools"
)

// Sentinels.
var (
	// ErrUnavailable: a server could not be started or reached, did not
	// answer initialize in time, or its tools could not be listed.
	ErrUnavailable = errors.New("mcp: server unavailable")
	// ErrClosed: the pool was closed.
	ErrClosed = errors.New("mcp: pool closed")
)

// Defaults of [Config].
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultCallTimeout    = 5 * time.Minute
	DefaultRetryDelay     = 30 * time.Second
)

// Config configures a [Pool]. Zero fields take the defaults.
type Config struct {
	// Logger receives the servers' stderr and their failures.
	Logger *zap.Logger
	// ConnectTimeout bounds starting a server, its answer to initialize and
	// the listing of its tools.
	ConnectTimeout time.Duration
	// CallTimeout bounds one tool call.
	CallTimeout time.Duration
	// RetryDelay is how long [Pool.Tools] reports a server that failed to
	// connect as unavailable without trying again. Tool calls always try
	// again (once each).
	RetryDelay time.Duration
	// Clock tells the time; time.Now by default.
	Clock func() time.Time
	// HTTPClient reaches remote servers. By default, a client whose
	// requests carry the W3C traceparent of the tool call's span (and are
	// client spans of the global TracerProvider), so that a server's own
	// traces join the turn's.
	HTTPClient *http.Client
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport, otelhttp.WithPropagators(propagation.TraceContext{}))}
	}
}

func (c *Config) validate() error {
	switch {
	case c.ConnectTimeout < 0:
		return fmt.Errorf("mcp: ConnectTimeout must not be negative (got %s)", c.ConnectTimeout)
	case c.CallTimeout < 0:
		return fmt.Errorf("mcp: CallTimeout must not be negative (got %s)", c.CallTimeout)
	case c.RetryDelay < 0:
		return fmt.Errorf("mcp: RetryDelay must not be negative (got %s)", c.RetryDelay)
	}
	return nil
}

// Pool holds the connections to MCP servers, one per distinct [Server]
// declaration, and is safe for concurrent use. Close it to stop the local
// servers' processes.
type Pool struct {
	cfg    Config
	client *sdk.Client

	mu       sync.Mutex
	closed   bool
	conns    map[string]*conn
	watchers sync.WaitGroup // one per live session, until it ends
}

// NewPool returns a pool that connects to nothing until asked.
func NewPool(cfg Config) (*Pool, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Pool{
		cfg:    cfg,
		client: sdk.NewClient(&sdk.Implementation{Name: "brain", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}}),
		conns:  make(map[string]*conn),
	}, nil
}

// conn returns the connection of s, made on first use (not yet connected).
func (p *Pool) conn(s Server) (*conn, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	k := s.key()
	c, ok := p.conns[k]
	if !ok {
		c = newConn(p, s)
		p.conns[k] = c
	}
	return c, nil
}

// watch calls fn in a goroutine that Close waits for, unless the pool is
// closed; it reports whether it did.
func (p *Pool) watch(fn func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.watchers.Go(fn)
	return true
}

// Close ends every connection, stopping the local servers' processes, and
// waits for them. Tools of the pool then return error results. Close is
// safe to call twice; a nil *Pool has nothing to close.
func (p *Pool) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed = true
	conns := make([]*conn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.close)
	}
	wg.Wait()
	p.watchers.Wait()
	return nil
}

// Tools returns the tools of server s that names ask for, as the model
// calls them ([ModelName]): a name is the tool's name on the server, or "*"
// for all its tools, in the server's order. It connects to s if it is not
// connected.
//
// A tool named one by one must exist on the server, have a name short
// enough for the model and a usable input schema; "*" leaves out the tools
// that do not, with a warning in the log.
//
// When s cannot be reached, the error matches [ErrUnavailable] and comes
// with usable tools all the same: a placeholder for each tool named one by
// one, whose calls try s again, and none for "*". Any other error comes
// with no tools.
func (p *Pool) Tools(ctx context.Context, s Server, names []string) ([]tools.Tool, error) {
	c, err := p.conn(s)
	if err != nil {
		return nil, err
	}
	listed, err := c.tools(ctx)
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			return nil, err
		}
		var out []tools.Tool
		for _, n := range names {
			if n == "*" {
				continue
			}
			t, nerr := c.placeholder(n, err)
			if nerr != nil {
				return nil, nerr
			}
			out = append(out, t)
		}
		return out, err
	}
	var out []tools.Tool
	var errs []error
	for _, n := range names {
		if n == "*" {
			for _, l := range listed {
				if l.err != nil {
					p.cfg.Logger.Warn("MCP tool left out", zap.String("server", s.Name), zap.String("tool", l.name), zap.Error(l.err))
					continue
				}
				out = append(out, l.tool)
			}
			continue
		}
		i := indexOf(listed, n)
		switch {
		case i < 0:
			errs = append(errs, &reasonError{
				msg:  fmt.Sprintf("MCP server %q has no tool %q (it has: %s)", s.Name, n, namesOf(listed)),
				kind: tools.ErrNotAvailable,
			})
		case listed[i].err != nil:
			errs = append(errs, listed[i].err)
		default:
			out = append(out, listed[i].tool)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
