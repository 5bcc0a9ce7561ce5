package api

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// readyTimeout bounds the Redis ping of /readyz.
const readyTimeout = 2 * time.Second

// healthz answers while the process is up.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	s.writeJSON(w, http.StatusOK, status{Status: "ok"})
}

// readyz answers 200 when Redis answers and recipes are loaded, else 503.
// The probe is unauthenticated: the cause goes to the log, not the body.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := s.cfg.Backend.Ping(ctx); err != nil {
		s.log.Warn("not ready: Redis does not answer", zap.Error(err))
		s.writeJSON(w, http.StatusServiceUnavailable, errorf(http.StatusServiceUnavailable, CodeNotReady, "Redis is not reachable"))
		return
	}
	if lib := s.cfg.Backend.Recipes(); lib == nil || len(lib.Names()) == 0 {
		s.writeJSON(w, http.StatusServiceUnavailable, errorf(http.StatusServiceUnavailable, CodeNotReady, "no recipes are loaded"))
		return
	}
	s.writeJSON(w, http.StatusOK, status{Status: "ready"})
}

// metrics serves Config.Metrics.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Metrics == nil {
		s.writeJSON(w, http.StatusNotFound, errorf(http.StatusNotFound, CodeNotFound, "metrics are not served here"))
		return
	}
	s.cfg.Metrics.ServeHTTP(w, r)
}
