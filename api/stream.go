package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/live"
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
//
// After the backlog, unless progress=0, the progress of the process's
// running turns (Backend.Watch) comes between the events as it happens:
//
//	event: progress
//	data: <live.Update JSON>
//
// with no id, so that Last-Event-ID only ever names a durable event; the
// user view gets only the updates whose User is set. Progress is never
// replayed: a client that reconnects gets what is published from then on.
// A watch that fails is logged and tried again at the next heartbeat; the
// durable events go on meanwhile.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, who identity) error {
	ctx := r.Context()
	pid := r.PathValue("id")
	v, err := viewParam(r, who)
	if err != nil {
		return err
	}
	wantProgress, err := progressParam(r)
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

	// Then the log is followed in a goroutine of its own, which blocks in
	// Backend.Follow, while this one writes what comes: new events,
	// progress, heartbeats. The follower ends with the stream.
	ctx, cancel := context.WithCancel(ctx)
	followed := make(chan batch)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.follow(ctx, pid, after, followed)
	}()
	defer func() {
		cancel()
		<-done
	}()
	var progress watch
	if wantProgress {
		progress = s.watch(ctx, log, pid, progress)
	}

	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case b := <-followed:
			if b.err != nil {
				s.streamEnded(ctx, log, b.err)
				return nil
			}
			if err := st.send(project(v, b.events)); err != nil {
				return nil
			}
		case u, ok := <-progress.updates:
			switch {
			case !ok && ctx.Err() != nil:
				return nil
			case !ok: // the watch ended before the stream: the events go on
				log.Warn("progress watch ended; the events go on, and it is watched again at the next heartbeat")
				progress = watch{failures: 1}
			case v == viewUser && !u.User:
				// Not the user's to see: a tool, text the model wrote to itself.
			default:
				if err := st.progress(&u); err != nil {
					return nil
				}
			}
		case <-heartbeat.C:
			if err := st.comment("heartbeat"); err != nil {
				return nil
			}
			// A read of the log does not notice a process that is gone.
			if _, err := s.cfg.Backend.Get(ctx, pid); err != nil {
				s.streamEnded(ctx, log, err)
				return nil
			}
			if wantProgress && progress.updates == nil {
				progress = s.watch(ctx, log, pid, progress)
			}
		}
	}
}

// batch is what one read of a followed log brought: events, or the error
// that ends the stream.
type batch struct {
	events []conversation.Event
	err    error
}

// follow reads pid's log after event id after until ctx ends, passing on
// each batch of new events and then the error that ends it, if any.
func (s *Server) follow(ctx context.Context, pid, after string, out chan<- batch) {
	for ctx.Err() == nil {
		evs, err := s.cfg.Backend.Follow(ctx, pid, after, s.cfg.FollowBlock)
		if err == nil && len(evs) == 0 {
			continue
		}
		select {
		case out <- batch{events: evs, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
		after = evs[len(evs)-1].ID
	}
}

// watch is a stream's watch of progress: its updates (nil while it has
// none) and how many times in a row it failed.
type watch struct {
	updates  <-chan live.Update
	failures int
}

// watch starts watching pid's progress, which ends with ctx. A watch that
// cannot start is logged (a warning the first time in a row, then at
// debug level: it is tried at every heartbeat) and has no updates.
func (s *Server) watch(ctx context.Context, log *zap.Logger, pid string, last watch) watch {
	updates, err := s.cfg.Backend.Watch(ctx, pid)
	if err == nil {
		if last.failures > 0 {
			log.Info("progress watched again", zap.Int("failures", last.failures))
		}
		return watch{updates: updates}
	}
	if ctx.Err() != nil {
		return last
	}
	if last.failures == 0 {
		log.Warn("progress watch failed; the events go on, and it is tried again at each heartbeat", zap.Error(err))
	} else {
		log.Debug("progress watch failed again", zap.Int("failures", last.failures+1), zap.Error(err))
	}
	return watch{failures: last.failures + 1}
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

// progress writes a progress update: no id, so that a client's
// Last-Event-ID stays on the last durable event. An update that does not
// encode is logged and left out.
func (s *sse) progress(u *live.Update) error {
	data, err := json.Marshal(u)
	if err != nil {
		s.log.Error("progress left out of a stream: it does not encode", zap.String("turn", u.Turn), zap.Error(err))
		return nil
	}
	f := append(s.frame[:0], "event: progress\ndata: "...)
	f = append(f, data...)
	s.frame = append(f, "\n\n"...)
	if _, err := s.w.Write(s.frame); err != nil {
		return err
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
