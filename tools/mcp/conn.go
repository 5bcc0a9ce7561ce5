package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/tools"
)

// conn is the connection to one server: a session while it lives, made
// again when it died and something needs it.
type conn struct {
	pool   *Pool
	server Server
	log    *zap.Logger
	// dialing is held by the one goroutine connecting; others wait for it
	// (or for their context) and take its outcome.
	dialing chan struct{}

	mu       sync.Mutex
	session  *sdk.ClientSession
	listed   []listed // the server's tools, as of the session's start
	attempts int      // connection attempts so far
	err      error    // of the last attempt, if it failed
	failedAt time.Time
	closed   bool
}

// listed is one tool a server listed: usable, or why not.
type listed struct {
	name string // on the server
	tool tools.Tool
	err  error
}

func newConn(p *Pool, s Server) *conn {
	return &conn{
		pool:    p,
		server:  s,
		log:     p.cfg.Logger.Named("mcp").With(zap.String("server", s.Name)),
		dialing: make(chan struct{}, 1),
	}
}

// tools returns the server's tools, connecting if need be, unless an
// attempt failed less than RetryDelay ago: then its error.
func (c *conn) tools(ctx context.Context) ([]listed, error) {
	_, l, err := c.connect(ctx, false)
	return l, err
}

// connect returns the live session, making one if there is none. With
// retry false, an attempt that failed less than RetryDelay ago is not
// repeated. An attempt that another goroutine makes meanwhile counts as
// this one's: a call tries the server at most once.
func (c *conn) connect(ctx context.Context, retry bool) (*sdk.ClientSession, []listed, error) {
	c.mu.Lock()
	recent := c.err != nil && c.pool.cfg.Clock().Before(c.failedAt.Add(c.pool.cfg.RetryDelay))
	s, l, err, known := c.known(!retry && recent)
	seen := c.attempts
	c.mu.Unlock()
	if known {
		return s, l, err
	}

	select {
	case c.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("%w: MCP server %q: gave up waiting for it to start: %w", ErrUnavailable, c.server.Name, ctx.Err())
	}
	defer func() { <-c.dialing }()
	c.mu.Lock()
	s, l, err, known = c.known(c.attempts != seen)
	if !known {
		c.attempts++
	}
	c.mu.Unlock()
	if known {
		return s, l, err
	}

	s, l, err = c.dial(ctx)
	c.mu.Lock()
	if err != nil {
		c.err, c.failedAt = err, c.pool.cfg.Clock()
		c.mu.Unlock()
		c.log.Warn("MCP server unavailable", zap.Error(err))
		return nil, nil, err
	}
	if c.closed || !c.pool.watch(func() { c.watch(s) }) {
		c.mu.Unlock()
		_ = s.Close()
		return nil, nil, ErrClosed
	}
	c.session, c.listed, c.err = s, l, nil
	c.mu.Unlock()
	c.log.Info("MCP server connected", zap.Int("tools", len(l)))
	return s, l, nil
}

// known returns, with c.mu held, what connect answers without dialling:
// ErrClosed, the live session, or, when lastErr, the last attempt's
// error; known is false when it must dial.
func (c *conn) known(lastErr bool) (s *sdk.ClientSession, l []listed, err error, known bool) {
	switch {
	case c.closed:
		return nil, nil, ErrClosed, true
	case c.session != nil:
		return c.session, c.listed, nil, true
	case lastErr && c.err != nil:
		return nil, nil, c.err, true
	}
	return nil, nil, nil, false
}

// dial starts a session and lists the server's tools, within
// ConnectTimeout.
func (c *conn) dial(ctx context.Context) (*sdk.ClientSession, []listed, error) {
	dctx, cancel := context.WithTimeout(ctx, c.pool.cfg.ConnectTimeout)
	defer cancel()
	stderr := &stderrLog{log: c.log}
	s, err := c.pool.client.Connect(dctx, c.server.transport(c.pool.cfg.HTTPClient, stderr), nil)
	if err != nil {
		return nil, nil, c.unavailable(ctx, "could not be started", err, stderr)
	}
	var l []listed
	for t, err := range s.Tools(dctx, nil) {
		if err != nil {
			_ = s.Close()
			return nil, nil, c.unavailable(ctx, "did not list its tools", err, stderr)
		}
		l = append(l, c.newListed(t))
	}
	return s, l, nil
}

// unavailable returns the error of a failed connection attempt, with the
// last line the server wrote on stderr, if any.
func (c *conn) unavailable(ctx context.Context, what string, err error, stderr *stderrLog) error {
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		what = fmt.Sprintf("did not answer within %s", c.pool.cfg.ConnectTimeout)
	}
	if c.server.URL != "" {
		what = fmt.Sprintf("at %s %s", c.server.URL, what)
	}
	msg := fmt.Sprintf("MCP server %q %s: %v", c.server.Name, what, err)
	if last := stderr.lastLine(); last != "" {
		msg += fmt.Sprintf(" (its last line on stderr: %q)", last)
	}
	return &reasonError{msg: msg, kind: ErrUnavailable, cause: err}
}

// watch waits for session s to end and forgets it, so that the next call
// starts the server again.
func (c *conn) watch(s *sdk.ClientSession) {
	err := s.Wait()
	if c.drop(s) {
		c.log.Warn("MCP server stopped", zap.NamedError("reason", err))
	}
}

// drop forgets session s and closes it, if it is still the live one; it
// reports whether it was.
func (c *conn) drop(s *sdk.ClientSession) bool {
	c.mu.Lock()
	live := c.session == s
	if live {
		c.session, c.listed = nil, nil
	}
	c.mu.Unlock()
	if live {
		_ = s.Close() // stops the process of a local server, if it lives on
	}
	return live
}

// close ends the connection for good.
func (c *conn) close() {
	c.mu.Lock()
	c.closed = true
	s := c.session
	c.session, c.listed = nil, nil
	c.mu.Unlock()
	if s != nil {
		if err := s.Close(); err != nil {
			c.log.Debug("MCP server closed", zap.Error(err))
		}
	}
}

// reasonError is an error with a message of its own that matches a
// sentinel and a cause with errors.Is and errors.As.
type reasonError struct {
	msg   string
	kind  error
	cause error
}

func (e *reasonError) Error() string { return e.msg }
func (e *reasonError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// oneLine returns s on one line, for error messages.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
