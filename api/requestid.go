package api

import (
	"context"
	"crypto/rand"
	"net/http"

	"go.uber.org/zap"
)

// RequestIDHeader carries a request's id. A client may send one, to find
// its requests in the server's log and traces; every answer carries the id
// the server used.
const RequestIDHeader = "X-Request-ID"

// maxRequestID bounds a client's request id, which goes into every log line
// of its request.
const maxRequestID = 128

// requestID returns the id the client sent when it is well-formed, else a
// new random one: a malformed id is replaced, not refused, since it is only
// a label.
func requestID(sent string) string {
	if validRequestID(sent) {
		return sent
	}
	return rand.Text()
}

// validRequestID reports whether id is 1 to maxRequestID bytes of printable
// ASCII, which keeps log lines and span attributes clean.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := range len(id) {
		if id[i] < 0x20 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

type loggerKey struct{}

// withLogger returns ctx with the request's logger, which names its id.
func withLogger(ctx context.Context, log *zap.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, log)
}

// logger returns the logger of request r: the server's, with the request's
// id (and trace id) on every line.
func (s *Server) logger(r *http.Request) *zap.Logger {
	if log, ok := r.Context().Value(loggerKey{}).(*zap.Logger); ok {
		return log
	}
	return s.log
}
