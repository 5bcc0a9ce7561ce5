package api

import (
	"net/http"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// recorder notes the status and size of an answer for its access-log line,
// its metrics and its span.
type recorder struct {
	http.ResponseWriter
	status int // 0 until the header is written
	bytes  int64
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (an event
// stream flushes and lifts its write deadline through it).
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// code is the answer's status: 200 when the handler wrote nothing, as
// net/http answers then.
func (w *recorder) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// accessLog writes the line of an answered request (an event stream's when
// it ends): at info, but at debug for the probes and the scrape, which come
// every few seconds. It names who sent the request, never the token, and
// holds no body.
func (s *Server) accessLog(x *exchange, status int, elapsed time.Duration) {
	level := zapcore.InfoLevel
	if public(x.r.URL.Path) {
		level = zapcore.DebugLevel
	}
	ce := x.log.Check(level, "request")
	if ce == nil {
		return
	}
	fields := []zap.Field{
		zap.String("method", x.r.Method),
		zap.String("path", x.r.URL.Path),
		zap.String("route", x.route),
		zap.Int("status", status),
		zap.Duration("duration", elapsed),
		zap.Int64("bytes", x.w.bytes),
		zap.String("remote", x.r.RemoteAddr),
	}
	if x.who != nil {
		fields = append(fields, zap.String("by", qualified(string(x.who.role), x.who.name)))
	}
	ce.Write(fields...)
}
