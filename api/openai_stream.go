package api

import (
	"encoding/json"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// oaiStream writes the server-sent events of a streamed response.
type oaiStream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	seq int64
	// named says each frame carries an event: line (the Responses API's
	// events do; chat completion chunks do not).
	named bool
}

// startStream answers with an event stream.
func startStream(w http.ResponseWriter, named bool) (*oaiStream, error) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's WriteTimeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &oaiStream{w: w, rc: rc, named: named}, rc.Flush()
}

// send writes one event of type typ with data v and flushes.
func (st *oaiStream) send(typ string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var f []byte
	if st.named {
		f = append(f, "event: "+typ+"\n"...)
	}
	f = append(f, "data: "...)
	f = append(f, data...)
	f = append(f, "\n\n"...)
	if _, err := st.w.Write(f); err != nil {
		return err
	}
	return st.rc.Flush()
}

// event writes a Responses stream event, numbered.
func (st *oaiStream) event(ev oaiEvent) error {
	ev.SequenceNumber = st.seq
	st.seq++
	return st.send(ev.Type, ev)
}

// streamResponse streams the response to exchange x as the Responses API
// does: response.created and response.in_progress, the output message and
// its text part added, the answer's deltas as the turn writes it (its
// progress, then what the progress did not carry), the text, part and
// message done, and response.completed (or response.incomplete) with the
// whole response. An error after the stream began ends it with an error
// event.
func (s *Server) streamResponse(w http.ResponseWriter, r *http.Request, x posted, resp *oaiResponse) error {
	st, err := startStream(w, true)
	if err != nil {
		x.stop()
		return nil // no flushing, no stream
	}
	zero := 0
	idx := &zero
	noLogprobs := []json.RawMessage{}
	itemID := resp.message("", "").ID
	inProgress := resp.message("", "in_progress")
	inProgress.Content = []oaiOutText{}
	emptyPart := oaiOutText{Type: "output_text", Annotations: []json.RawMessage{}, Logprobs: noLogprobs}
	start := []oaiEvent{
		{Type: "response.created", Response: resp},
		{Type: "response.in_progress", Response: resp},
		{Type: "response.output_item.added", OutputIndex: idx, Item: &inProgress},
		{Type: "response.content_part.added", OutputIndex: idx, ContentIndex: idx, ItemID: itemID, Part: &emptyPart},
	}
	for _, ev := range start {
		if err := st.event(ev); err != nil {
			x.stop()
			return nil
		}
	}
	a, err := s.await(r.Context(), x, func(d string) error {
		return st.event(oaiEvent{Type: "response.output_text.delta", OutputIndex: idx, ContentIndex: idx, ItemID: itemID, Delta: &d, Logprobs: &noLogprobs})
	})
	if err != nil {
		if r.Context().Err() == nil {
			e := s.apiError(r, err)
			s.logger(r).Warn("streamed response ended early", zap.String("process", x.pid), zap.Error(err))
			_ = st.send("error", map[string]any{"type": "error", "code": e.Code, "message": e.Message, "param": nil, "sequence_number": st.seq})
		}
		return nil
	}
	resp.finish(a)
	item := resp.Output[0]
	part := item.Content[0]
	end := "response.completed"
	if resp.Status == "incomplete" {
		end = "response.incomplete"
	}
	for _, ev := range []oaiEvent{
		{Type: "response.output_text.done", OutputIndex: idx, ContentIndex: idx, ItemID: itemID, Text: &part.Text, Logprobs: &noLogprobs},
		{Type: "response.content_part.done", OutputIndex: idx, ContentIndex: idx, ItemID: itemID, Part: &part},
		{Type: "response.output_item.done", OutputIndex: idx, Item: &item},
		{Type: end, Response: resp},
	} {
		if err := st.event(ev); err != nil {
			return nil
		}
	}
	return nil
}
