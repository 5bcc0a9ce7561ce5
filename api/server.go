package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/engine-brain/brain/lifecycle"
)

// Defaults of Config.
const (
	DefaultMaxBody     = 64 << 10
	DefaultHeartbeat   = 15 * time.Second
	DefaultFollowBlock = time.Second
)

// Config configures a Server. Zero values take the defaults named below.
type Config struct {
	// Backend serves the processes and recipes. Required.
	Backend Backend
	// Tokens are the accepted bearer tokens (Server.SetTokens replaces
	// them). With none the server is open: every request acts as an admin
	// with no name (serve only allows that on loopback).
	Tokens []Token
	// MaxBody bounds request bodies in bytes (default 64 KiB).
	MaxBody int64
	// Metrics serves /metrics; nil answers 404.
	Metrics http.Handler
	// Registerer takes the API's own metrics: brain_http_request_duration_seconds
	// {route,code}, brain_http_requests_in_flight and
	// brain_redis_unavailable_total{source="api"}. Nil registers none.
	Registerer prometheus.Registerer
	// TracerProvider makes the span of each request (default: the global
	// one, a no-op unless the binary installs an SDK).
	TracerProvider trace.TracerProvider
	// Propagator reads the trace context a client sends, so that its trace
	// continues here (default: the global one).
	Propagator propagation.TextMapPropagator
	// Reload reloads the recipes (POST /v1/recipes/reload); nil answers 501.
	Reload func(context.Context) error
	// Logger receives the server's logs (default: none). Tokens and
	// Authorization headers are never logged.
	Logger *zap.Logger
	// Heartbeat is the interval of the comment lines that keep an event
	// stream alive through proxies (default 15s).
	Heartbeat time.Duration
	// FollowBlock is how long one read of an event stream's log waits for
	// new events before it checks that the client is still there (default
	// 1s; at least 1ms, as Redis counts in milliseconds and 0 would block
	// forever). Progress and heartbeats do not wait for it.
	FollowBlock time.Duration
}

func (c *Config) setDefaults() {
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.FollowBlock == 0 {
		c.FollowBlock = DefaultFollowBlock
	}
	if c.TracerProvider == nil {
		c.TracerProvider = otel.GetTracerProvider()
	}
	if c.Propagator == nil {
		c.Propagator = otel.GetTextMapPropagator()
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Backend == nil {
		errs = append(errs, errors.New("Backend: required"))
	}
	if c.MaxBody < 1 {
		errs = append(errs, fmt.Errorf("MaxBody: must be positive (got %d)", c.MaxBody))
	}
	if c.Heartbeat < time.Millisecond {
		errs = append(errs, fmt.Errorf("Heartbeat: must be at least 1ms (got %s)", c.Heartbeat))
	}
	if c.FollowBlock < time.Millisecond {
		errs = append(errs, fmt.Errorf("FollowBlock: must be at least 1ms (got %s)", c.FollowBlock))
	}
	errs = append(errs, validateTokens(c.Tokens)...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("api: invalid config: %w", err)
	}
	return nil
}

// Server is the HTTP API. It is an http.Handler, safe for concurrent use,
// and immutable once built but for its tokens (SetTokens) and its draining
// (SetDraining).
type Server struct {
	cfg         Config
	log         *zap.Logger
	mux         *http.ServeMux
	tokens      atomic.Pointer[tokenTable]
	draining    atomic.Bool
	httpMetrics *httpMetrics
	tracer      trace.Tracer
	propagator  propagation.TextMapPropagator
	// table is every route the mux serves, in the order routes registers
	// them (the OpenAPI test holds api/openapi.json to it).
	table []routeEntry
}

// routeEntry is a route of the table: its pattern and the least role it
// needs ("" for a public route, served without a token).
type routeEntry struct {
	pattern string
	role    Role
}

// New builds a server.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	metrics, err := newHTTPMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("api: metrics: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger.Named("api"), mux: http.NewServeMux(), httpMetrics: metrics,
		tracer: cfg.TracerProvider.Tracer(tracerName), propagator: cfg.Propagator}
	s.tokens.Store(newTokenTable(cfg.Tokens, len(cfg.Tokens) == 0))
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	s.route("POST /v1/processes", RoleUser, s.createProcess)
	s.route("GET /v1/processes", RoleUser, s.listProcesses)
	s.route("GET /v1/processes/{id}", RoleUser, s.getProcess)
	s.route("DELETE /v1/processes/{id}", RoleUser, s.deleteProcess)
	s.route("POST /v1/processes/{id}/messages", RoleUser, s.postMessage)
	s.route("POST /v1/processes/{id}/steer", RoleOperator, s.steer)
	s.route("POST /v1/processes/{id}/pause", RoleOperator, s.control(lifecycle.Pause))
	s.route("POST /v1/processes/{id}/resume", RoleOperator, s.control(lifecycle.Resume))
	s.route("POST /v1/processes/{id}/stop", RoleOperator, s.control(lifecycle.Finish))
	s.route("POST /v1/processes/{id}/retry", RoleOperator, s.control(lifecycle.Retry))
	s.route("GET /v1/processes/{id}/events", RoleUser, s.listEvents)
	s.route("GET /v1/processes/{id}/events/stream", RoleUser, s.streamEvents)
	s.route("GET /v1/processes/{id}/inbox", RoleOperator, s.listInbox)
	s.route("GET /v1/processes/{id}/timers", RoleUser, s.listTimers)
	s.route("POST /v1/processes/{id}/timers", RoleOperator, s.scheduleTimer)
	s.route("DELETE /v1/processes/{id}/timers/{timer}", RoleOperator, s.cancelTimer)
	s.route("POST /v1/processes/{id}/approvals/{call_id}", RoleUser, s.decideApproval)
	s.route("GET /v1/approvals", RoleUser, s.listApprovals)
	s.route("GET /v1/recipes", RoleUser, s.listRecipes)
	s.route("GET /v1/recipes/{name}", RoleUser, s.getRecipe)
	s.route("POST /v1/recipes/reload", RoleAdmin, s.reloadRecipes)
	// The OpenAI-compatible face (openai.go).
	s.route("GET /v1/models", RoleUser, s.listModels)
	s.route("GET /v1/models/{model}", RoleUser, s.getModel)
	s.route("POST /v1/responses", RoleUser, s.createResponse)
	s.route("POST /v1/chat/completions", RoleUser, s.chatCompletion)
	// A2A (a2a.go): an agent per exposed recipe.
	s.route("POST /a2a/{recipe}", RoleUser, s.a2aRPC)
	s.route("POST /a2a/{recipe}/{$}", RoleUser, s.a2aRPC)
	s.handle("GET /a2a/{recipe}/.well-known/agent-card.json", s.agentCard)
	s.handle("GET /.well-known/agent-card.json", s.agentCards)
	s.handle("GET /healthz", s.healthz)
	s.handle("GET /readyz", s.readyz)
	s.handle("GET /metrics", s.metrics)
	s.handle("GET /openapi.json", s.openAPI)
}

// public reports whether path is served without a token: the probes, the
// metrics scrape and the API's description.
func public(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/metrics", "/openapi.json":
		return true
	}
	return a2aPublic(path)
}

// handler serves an authenticated request; an error it returns is written
// as an error body.
type handler func(w http.ResponseWriter, r *http.Request, who identity) error

// handle serves pattern, a public route, with h.
func (s *Server) handle(pattern string, h http.HandlerFunc) {
	s.table = append(s.table, routeEntry{pattern: pattern})
	s.mux.HandleFunc(pattern, h)
}

// route serves pattern with h for callers whose role allows need.
func (s *Server) route(pattern string, need Role, h handler) {
	s.table = append(s.table, routeEntry{pattern: pattern, role: need})
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		who := identityFrom(r.Context())
		if !who.role.allows(need) {
			s.writeError(w, r, errorf(http.StatusForbidden, CodeForbidden, "this needs the %s role", need))
			return
		}
		if err := h(w, r, who); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// ServeHTTP gives every request an id, a span, a line in the access log
// and its metrics (observe.go); it authenticates every request but those
// of the public paths, refuses a query string that does not decode, then
// routes it. Unknown routes get 401 without a valid token (they reveal
// nothing), else a JSON 404 or 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, pattern := s.mux.Handler(r)
	x, r := s.begin(w, r, pattern)
	defer s.end(x)
	w = x.w
	defer s.recoverPanic(w, r)
	if !public(r.URL.Path) {
		who, err := s.authenticate(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		x.who = &who
		r = r.WithContext(withIdentity(r.Context(), who))
	}
	if err := checkQuery(r.URL.RawQuery); err != nil {
		s.writeError(w, r, err)
		return
	}
	if pattern == "" {
		w = &unrouted{ResponseWriter: w, s: s, r: r}
	}
	s.mux.ServeHTTP(w, r)
}

// recoverPanic turns a handler's panic into a 500 with the stack logged.
func (s *Server) recoverPanic(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler { // net/http's signal to abort the response
		panic(v)
	}
	s.logger(r).Error("panic in a handler", zap.String("method", r.Method), zap.String("path", r.URL.Path),
		zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
	s.writeJSON(w, r, internalError.Status, internalError)
}

// unrouted rewrites the mux's plain-text 404 and 405 answers as error
// bodies; other answers (a redirect to a cleaned path) pass unchanged.
type unrouted struct {
	http.ResponseWriter
	s       *Server
	r       *http.Request
	handled bool
}

func (u *unrouted) WriteHeader(code int) {
	switch code {
	case http.StatusNotFound:
		u.handled = true
		u.s.writeJSON(u.ResponseWriter, u.r, code, errorf(code, CodeNotFound, "no route %s %s", u.r.Method, u.r.URL.Path))
	case http.StatusMethodNotAllowed:
		u.handled = true
		u.s.writeJSON(u.ResponseWriter, u.r, code, errorf(code, CodeMethodNotAllowed, "%s is not allowed on %s; allowed: %s",
			u.r.Method, u.r.URL.Path, u.Header().Get("Allow")))
	default:
		u.ResponseWriter.WriteHeader(code)
	}
}

func (u *unrouted) Write(b []byte) (int, error) {
	if u.handled {
		return len(b), nil
	}
	return u.ResponseWriter.Write(b)
}

func (u *unrouted) Unwrap() http.ResponseWriter { return u.ResponseWriter }
