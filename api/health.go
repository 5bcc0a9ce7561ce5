package api

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// redisCheckTimeout bounds the Redis ping of /readyz, well under the
// probe's own timeout (Kubernetes' default is 1s): a slow Redis is
// reported, not a probe that times out.
const redisCheckTimeout = 300 * time.Millisecond

// readiness is the body of a 200 from /readyz.
type readiness struct {
	Status string `json:"status"` // "ready"
	// Redis is "ok", or "unavailable" while Redis does not answer: the
	// node stays ready and the requests that need Redis answer 503 with
	// Retry-After.
	Redis string `json:"redis"`
}

// SetDraining makes /readyz answer 503 from now on, so that load balancers
// send no new requests while the server finishes those it has. The binary
// calls it when SIGTERM arrives, before it shuts the HTTP server down;
// requests that still come are served as before. There is no way back: a
// draining node is on its way out.
func (s *Server) SetDraining() {
	if !s.draining.Swap(true) {
		s.log.Info("draining: /readyz answers 503 from now on")
	}
}

// healthz answers while the process is up.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, r, http.StatusOK, status{Status: "ok"})
}

// readyz answers 200 while the node may take requests: its recipes are
// loaded and it is not draining. A Redis outage does not make it unready:
// were it so, every node would leave the load balancer at once and clients
// would get connection errors instead of the API's 503 with Retry-After.
// The body says whether Redis answers; the probe is unauthenticated, so the
// cause goes to the log.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		s.writeJSON(w, r, http.StatusServiceUnavailable, errorf(http.StatusServiceUnavailable, CodeNotReady, "the node is draining"))
		return
	}
	if lib := s.cfg.Backend.Recipes(); lib == nil || len(lib.Names()) == 0 {
		s.writeJSON(w, r, http.StatusServiceUnavailable, errorf(http.StatusServiceUnavailable, CodeNotReady, "no recipes are loaded"))
		return
	}
	ready := readiness{Status: "ready", Redis: "ok"}
	ctx, cancel := context.WithTimeout(r.Context(), redisCheckTimeout)
	defer cancel()
	if err := s.cfg.Backend.Ping(ctx); err != nil {
		s.logger(r).Warn("ready, but Redis does not answer: requests that need it answer 503", zap.Error(err))
		ready.Redis = "unavailable"
	}
	s.writeJSON(w, r, http.StatusOK, ready)
}

// metrics serves Config.Metrics.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Metrics == nil {
		s.writeJSON(w, r, http.StatusNotFound, errorf(http.StatusNotFound, CodeNotFound, "metrics are not served here"))
		return
	}
	s.cfg.Metrics.ServeHTTP(w, r)
}
