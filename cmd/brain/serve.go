package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/web"
)

// The HTTP server's timeouts. WriteTimeout is 0 on purpose: it bounds the
// whole response, and an SSE event stream (GET .../events/stream) is one
// response that lasts as long as a client follows a process. Slow clients
// are bounded by ReadHeaderTimeout and ReadTimeout instead, and idle
// keep-alive connections by IdleTimeout.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 120 * time.Second
	writeTimeout      = 0
)

const (
	// shutdownTimeout bounds how long requests in flight may take to finish
	// once the server is asked to stop.
	shutdownTimeout = 10 * time.Second
	// streamGrace is how long event streams keep going after shutdown
	// starts, so that the last events reach their clients; then their
	// requests are cancelled (Shutdown never interrupts a running handler).
	streamGrace = time.Second
	// nodeGrace is how long running turns may take to finish once the
	// API has stopped (brain.Config.Grace); a turn cut short is taken
	// over by another node.
	nodeGrace = 10 * time.Second
	// telemetryFlush bounds the export of the last spans and metrics.
	telemetryFlush = 5 * time.Second
	// stopTimeout is the most brain serve takes to exit after SIGTERM:
	// a supervisor's grace (Kubernetes', systemd's) must exceed it.
	stopTimeout = shutdownTimeout + nodeGrace + telemetryFlush
)

// runServe runs `brain serve` until ctx ends (SIGINT, SIGTERM) and returns
// the exit code: 2 for a bad configuration, 1 when serving fails. It writes
// nothing to stdout: the log tells what happens.
func runServe(ctx context.Context, args []string, _, stderr io.Writer) int {
	cfg, err := loadServeConfig(args, os.LookupEnv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "brain serve: %v\n", err)
		return 2
	}
	log := newLogger(cfg.Log, stderr)
	defer func() { _ = log.Sync() }()
	warn, err := checkOpenMode(cfg.Listen, len(cfg.Tokens), cfg.InsecureOpen)
	if err != nil {
		fmt.Fprintf(stderr, "brain serve: %v\n", err)
		return 2
	}
	if warn != "" {
		log.Warn(warn)
	}
	tuneGC(os.Getenv)
	if err := serve(ctx, cfg, log); err != nil {
		fmt.Fprintf(stderr, "brain serve: %v\n", err)
		return 1
	}
	return 0
}

// serve runs a node and its HTTP API until ctx ends, then shuts both down:
// HTTP first (no new work arrives), then the node (turns finish within its
// grace period).
func serve(ctx context.Context, cfg serveConfig, log *zap.Logger) error {
	if cfg.File != "" {
		log.Info("config file read", zap.String("file", cfg.File))
	}
	lib, err := loadRecipes(cfg.Recipes)
	if err != nil {
		return err
	}
	models, err := newModels(cfg.Providers, log.Named("models"))
	if err != nil {
		return err
	}
	if len(cfg.Providers) == 0 {
		log.Warn(demoModelWarning, zap.Strings("providers", recipeProviders(lib)))
	}
	if err := models.Check(lib); err != nil {
		return fmt.Errorf("recipes name models this server cannot run:\n%w", err)
	}

	rdb, closeRedis, err := openRedis(ctx, cfg.Redis, log)
	if err != nil {
		return err
	}
	defer closeRedis()

	reg := metricsRegistry()
	node, err := brain.New(brain.Config{
		Redis:                 rdb,
		NodeID:                cfg.NodeID,
		Concurrency:           cfg.Concurrency,
		HistoryBytes:          int(cfg.HistoryMemory),
		RetainFinished:        cfg.RetainFinished,
		InboxLimit:            cfg.nodeInboxLimit(),
		MaxLogEvents:          cfg.MaxLogEvents,
		OwnerLimit:            cfg.MaxProcessesPerOwner,
		WaitReplicas:          cfg.WaitReplicas,
		Partitions:            cfg.Partitions,
		AffinityWait:          cfg.nodeAffinityWait(),
		Grace:                 nodeGrace,
		Recipes:               lib,
		ResolveModel:          models.Resolve,
		Engines:               cfg.Engines,
		Logger:                log,
		Metrics:               brain.NewMetrics(reg),
		CaptureMessageContent: cfg.Telemetry.CaptureContent,
	})
	if err != nil {
		return err
	}
	if err := node.RegisterStateGauge(reg); err != nil {
		return err
	}
	// OpenTelemetry's global providers, which the node and the API take by
	// default, are installed once the node has its id, for the resource;
	// the tracer and meters the node took from them already follow them.
	tel, err := startTelemetry(ctx, cfg.Telemetry, node.ID(), log.Named("otel"))
	if err != nil {
		return err
	}
	defer tel.flush(context.WithoutCancel(ctx)) // after the node's last turns
	reload := &reloader{dir: cfg.Recipes, models: models, node: node, log: log.Named("recipes")}
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	apiMetrics := metrics
	if cfg.MetricsListen != "" {
		apiMetrics = nil // served on its own address only
	}
	handler, err := api.New(api.Config{
		Backend:    node,
		Tokens:     cfg.Tokens,
		MaxBody:    cfg.MaxBody,
		Metrics:    apiMetrics,
		Registerer: reg,
		Reload:     reload.Reload,
		Logger:     log, // named "api" by the server
	})
	if err != nil {
		return err
	}
	tokens := &tokenReloader{file: cfg.File, lookupEnv: os.LookupEnv, api: handler, log: log.Named("tokens")}
	console, err := web.New(web.Config{Logger: log}) // named "web" by the handler
	if err != nil {
		return err
	}

	// Listen before starting anything, so a taken port fails fast and the
	// log shows the address actually bound (port 0 picks one).
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	metricsSrv, metricsLn, err := listenMetrics(cfg.MetricsListen, metrics, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	streams, cancelStreams := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelStreams()
	srv := &http.Server{
		Handler:           mount(handler, console),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		BaseContext:       func(net.Listener) context.Context { return streams },
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	srv.RegisterOnShutdown(func() { time.AfterFunc(streamGrace, cancelStreams) })

	// SIGHUP is caught from now on: its default action would end the
	// process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	if err := node.Start(ctx); err != nil {
		_ = ln.Close()
		if metricsLn != nil {
			_ = metricsLn.Close()
		}
		return err
	}
	if metricsLn != nil {
		log.Info("metrics on http://" + metricsLn.Addr().String() + "/metrics")
	}
	log.Info("serving on http://"+ln.Addr().String(), zap.Int("tokens", len(cfg.Tokens)), zap.Strings("recipes", lib.Names()))

	// The HTTP server and the SIGHUP reloader run until ctx ends (SIGINT,
	// SIGTERM) or the server fails; then everything shuts down. This is
	// errgroup's shape, written out: golang.org/x/sync is not among the
	// module's requirements.
	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			fail(fmt.Errorf("http: %w", err))
		}
	})
	if metricsLn != nil {
		wg.Go(func() {
			if err := metricsSrv.Serve(metricsLn); !errors.Is(err, http.ErrServerClosed) {
				fail(fmt.Errorf("metrics http: %w", err))
			}
		})
	}
	wg.Go(func() { reloadOnHangup(runCtx, hup, log, reload.Reload, tokens.Reload) })

	<-runCtx.Done()
	var errs []error
	if ctx.Err() == nil {
		errs = append(errs, context.Cause(runCtx))
	}
	log.Info("shutting down")
	// /readyz answers 503 from now on, while requests in flight finish and
	// the node drains, so that a load balancer that still probes sends no
	// more.
	handler.SetDraining()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
	}
	if metricsLn != nil {
		if err := metricsSrv.Shutdown(sctx); err != nil {
			errs = append(errs, fmt.Errorf("metrics http shutdown: %w", err))
		}
	}
	// The node bounds its own stop with its grace period.
	if err := node.Stop(context.WithoutCancel(ctx)); err != nil {
		errs = append(errs, fmt.Errorf("node stop: %w", err))
	}
	wg.Wait()
	log.Info("stopped")
	return errors.Join(errs...)
}

// listenMetrics listens on addr, when set, for a server of metrics alone
// at /metrics; without addr it returns nil and nothing to serve.
func listenMetrics(addr string, metrics http.Handler, log *zap.Logger) (*http.Server, net.Listener, error) {
	if addr == "" {
		return nil, nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          zap.NewStdLog(log.Named("metrics")),
	}, ln, nil
}

// mount serves the API under /v1 with its probes, metrics and description
// (/openapi.json), A2A under /a2a/ with the list of agent cards, and the
// operator console (the page, its assets and its markdown renderer)
// everywhere else.
func mount(apiHandler, console http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/v1/", "/healthz", "/readyz", "/metrics", "/openapi.json", "/a2a/", "/.well-known/agent-card.json"} {
		mux.Handle(p, apiHandler)
	}
	mux.Handle("/", console)
	return mux
}

// reloadOnHangup calls every reload (the recipes', the tokens') on every
// SIGHUP until ctx ends.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, log *zap.Logger, reloads ...func(context.Context) error) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			log.Info("SIGHUP: reloading the recipes and the tokens")
			for _, reload := range reloads {
				_ = reload(ctx) // each logs its outcome; on error what it reloads stays
			}
		}
	}
}
