package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/store"
)

// backlogPage is how many events one read of a stream's backlog takes.
const backlogPage = 500

// streamEvents serves a process's log as server-sent events: the backlog
// after Last-Event-ID (or after=), then new events as they are appended,
// until the client goes or the process is gone. Each event is
//
//	id: <log id>
//	event: <type>
//	data: <JSON>
//
// and a ": heartbeat" comment is written every Heartbeat. In the user view
// each batch goes through conversation.UserView; events it leaves out still
// move the stream's position, so a client resuming with the last id it saw
// neither misses nor repeats an event.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, who identity) error {
	ctx := r.Context()
	pid := r.PathValue("id")
	v, err := viewParam(r, who)
	if err != nil {
		return err
	}
	after, err := afterParam(r.Header.Get("Last-Event-ID"), "Last-Event-ID")
	if err != nil {
		return err
	}
	if after == "" {
		if after, err = afterParam(r.URL.Query().Get("after"), "after"); err != nil {
			return err
		}
	}
	if _, err := s.process(ctx, pid, who); err != nil {
		return err
	}

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's WriteTimeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	log := s.logger(r).With(zap.String("process", pid))
	st := &sse{w: w, rc: rc, log: log}
	if err := rc.Flush(); err != nil {
		return nil // no flushing, no stream; nothing more can be written
	}

	// The backlog, a page at a time.
	for {
		evs, err := s.cfg.Backend.Log(ctx, pid, after, backlogPage)
		if err != nil {
			s.streamEnded(ctx, log, err)
			return nil
		}
		if len(evs) == 0 {
			break
		}
		if err := st.send(project(v, evs)); err != nil {
			return nil // the client is gone
		}
		after = evs[len(evs)-1].ID
		if len(evs) < backlogPage {
			break
		}
	}

	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	for ctx.Err() == nil {
		evs, err := s.cfg.Backend.Follow(ctx, pid, after, s.cfg.FollowBlock)
		if err != nil {
			s.streamEnded(ctx, log, err)
			return nil
		}
		if len(evs) > 0 {
			if err := st.send(project(v, evs)); err != nil {
				return nil
			}
			after = evs[len(evs)-1].ID
		}
		select {
		case <-heartbeat.C:
			if err := st.comment("heartbeat"); err != nil {
				return nil
			}
			// A read of the log does not notice a process that is gone.
			if _, err := s.cfg.Backend.Get(ctx, pid); err != nil {
				s.streamEnded(ctx, log, err)
				return nil
			}
		default:
		}
	}
	return nil
}

// streamEnded logs why a stream ended, unless it is the ordinary end: the
// client left or the process is gone.
func (s *Server) streamEnded(ctx context.Context, log *zap.Logger, err error) {
	if ctx.Err() != nil || errors.Is(err, store.ErrNotFound) {
		return
	}
	log.Warn("event stream ended", zap.Error(err))
}

// sse writes server-sent events, flushing after each batch.
type sse struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	log   *zap.Logger
	frame []byte // the event being written, reused
}

// send writes events, each in one Write, and flushes. An event that does
// not encode (which storage rules out) is logged and left out rather than
// ending every stream at it.
func (s *sse) send(events []conversation.Event) error {
	if len(events) == 0 {
		return nil
	}
	for i := range events {
		e := &events[i]
		f := append(s.frame[:0], "id: "...)
		f = append(f, e.ID...)
		if t := string(e.Type); t != "" && !strings.ContainsAny(t, "\r\n") {
			f = append(f, "\nevent: "...)
			f = append(f, t...)
		}
		f = append(f, "\ndata: "...)
		f, err := e.AppendJSON(f) // compact JSON: one line
		if err != nil {
			s.log.Error("event left out of a stream: it does not encode", zap.String("event", e.ID), zap.Error(err))
			continue
		}
		s.frame = append(f, "\n\n"...)
		if _, err := s.w.Write(s.frame); err != nil {
			return err
		}
	}
	return s.rc.Flush()
}

// comment writes a comment line, which clients ignore.
func (s *sse) comment(text string) error {
	if _, err := s.w.Write([]byte(": " + text + "\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}
