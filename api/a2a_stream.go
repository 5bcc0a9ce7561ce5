package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/store"
)

// sendStreamingMessage is SendStreamingMessage: the message is posted as
// SendMessage posts it, then the task is streamed.
func (a *a2aCall) sendStreamingMessage() error {
	var p a2aSendParams
	if err := a.decodeParams(&p); err != nil {
		return err
	}
	rec, err := a.send(a.r.Context(), &p)
	if err != nil {
		return err
	}
	return a.stream(rec)
}

// subscribeToTask is SubscribeToTask: the task as it is now, then its
// updates. Any node serves it, as every node reads the same log: a client
// whose stream broke (its node died) subscribes again, anywhere.
func (a *a2aCall) subscribeToTask() error {
	var p a2aTaskParams
	if err := a.decodeParams(&p); err != nil {
		return err
	}
	rec, err := a.task(a.r.Context(), p.ID)
	if err != nil {
		return err
	}
	if ended(rec) {
		return &rpcError{Code: rpcUnsupportedOperation, Message: fmt.Sprintf("task %s has ended (%s); GetTask returns it", rec.ID, rec.Status.State)}
	}
	return a.stream(rec)
}

// stream writes the task of rec as server-sent events, each the data of
// one JSON-RPC response: first the Task, then a TaskStatusUpdateEvent at
// each change of its status and a TaskArtifactUpdateEvent for each new
// artifact, read from the log as it grows. The stream ends when the task
// has ended or waits for input (the next message opens a stream of its
// own), or when the client leaves.
func (a *a2aCall) stream(rec store.Record) error {
	ctx := a.r.Context()
	t, err := a.s.readTaskLog(ctx, rec.ID)
	if err != nil {
		return err
	}
	a.streamed = true
	rc := http.NewResponseController(a.w)
	_ = rc.SetWriteDeadline(time.Time{})
	h := a.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	a.w.WriteHeader(http.StatusOK)
	log := a.s.logger(a.r).With(zap.String("process", rec.ID))
	out := &a2aEvents{w: a.w, rc: rc, id: a.id}

	task := t.task(rec, nil, true)
	if out.send(a2aStreamResponse{Task: &task}) != nil {
		return nil
	}
	last := task.Status
	for !final(last.State) {
		evs, err := a.s.cfg.Backend.Follow(ctx, rec.ID, t.after, a.s.cfg.FollowBlock)
		made := t.add(evs)
		if err == nil {
			rec, err = a.s.cfg.Backend.Get(ctx, rec.ID)
		}
		if err == nil {
			// The record may be newer than what Follow read: read on.
			var more []a2aArtifact
			more, err = a.s.catchUp(ctx, t)
			made = append(made, more...)
		}
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("A2A stream ended", zap.Error(err))
				_ = out.fail(a.s.rpcErrorOf(a.r, err))
			}
			return nil
		}
		ctxID := contextOf(rec)
		for _, art := range made {
			if out.send(a2aStreamResponse{ArtifactUpdate: &a2aArtifactUpdate{TaskID: rec.ID, ContextID: ctxID, Artifact: art, LastChunk: true}}) != nil {
				return nil
			}
		}
		st := t.status(rec)
		if st.State != last.State || messageID(st.Message) != messageID(last.Message) {
			if out.send(a2aStreamResponse{StatusUpdate: &a2aStatusUpdate{TaskID: rec.ID, ContextID: ctxID, Status: st}}) != nil {
				return nil
			}
			last = st
		} else if len(evs) == 0 && out.comment() != nil {
			return nil // the client is gone
		}
	}
	return nil
}

func messageID(m *a2aMessage) string {
	if m == nil {
		return ""
	}
	return m.MessageID
}

// a2aEvents writes the events of an A2A stream.
type a2aEvents struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	id json.RawMessage
}

func (e *a2aEvents) send(result a2aStreamResponse) error {
	return e.write(rpcResponse{JSONRPC: "2.0", ID: e.id, Result: result})
}

// fail writes an error that ends the stream.
func (e *a2aEvents) fail(err *rpcError) error {
	return e.write(rpcResponse{JSONRPC: "2.0", ID: e.id, Error: err})
}

func (e *a2aEvents) write(v rpcResponse) error {
	if len(v.ID) == 0 {
		v.ID = json.RawMessage("null")
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := e.w.Write(append(append([]byte("data: "), data...), "\n\n"...)); err != nil {
		return err
	}
	return e.rc.Flush()
}

// comment keeps the stream alive through proxies while nothing happens.
func (e *a2aEvents) comment() error {
	if _, err := e.w.Write([]byte(": keep-alive\n\n")); err != nil {
		return err
	}
	return e.rc.Flush()
}
