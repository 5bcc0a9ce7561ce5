package mcp

import (
	"bytes"
	"strings"
	"sync"

	"go.uber.org/zap"
)

// maxStderrLine bounds a line of a server's stderr kept for logs and error
// messages.
const maxStderrLine = 500

// stderrLog is the stderr of a local server's process: each line is logged,
// and the last one is kept, for the error saying why the server failed.
type stderrLog struct {
	log *zap.Logger

	mu      sync.Mutex
	partial []byte
	last    string
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > maxStderrLine {
		w.line(string(w.partial))
		w.partial = w.partial[:0]
	}
	return len(p), nil
}

// line logs one line; w.mu is held.
func (w *stderrLog) line(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	if len(s) > maxStderrLine {
		s = strings.ToValidUTF8(s[:maxStderrLine], "") + "…"
	}
	w.last = s
	w.log.Info("server stderr", zap.String("line", s))
}

// lastLine returns the last line the server wrote, or "".
func (w *stderrLog) lastLine() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := strings.TrimSpace(string(w.partial)); s != "" {
		return s
	}
	return w.last
}
