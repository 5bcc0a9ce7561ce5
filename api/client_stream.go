package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/ctxtime"
	"github.com/engine-brain/brain/live"
)

// Reconnection delays of Stream: the first, doubled up to the last.
const (
	minReconnect = 100 * time.Millisecond
	maxReconnect = 5 * time.Second
)

// StreamOption configures a Stream.
type StreamOption func(*streamOptions)

type streamOptions struct {
	progress func(live.Update) error
}

// WithProgress makes Stream ask for the progress of the process's running
// turns too (the stream's progress events) and call fn with each update,
// in the order they come between the events. Progress is ephemeral: it is
// not replayed after a reconnect (an update's Offset shows a gap), and the
// durable event that lands later supersedes it. In the user view only the
// updates a person may see come. Stream returns fn's error. Without
// WithProgress the stream asks for durable events only (progress=0).
func WithProgress(fn func(live.Update) error) StreamOption {
	return func(o *streamOptions) { o.progress = fn }
}

// Stream follows a process's log as server-sent events in view ("user",
// "raw" or "" for the server's default), after lastEventID ("" = from the
// start), calling fn with each event in order. A dropped connection (or a
// 502, 503 or 504) is reconnected with Last-Event-ID set to the last event
// received, so fn sees every event once. Stream returns fn's error, the
// server's other errors (*Error), or ctx's error when ctx ends.
func (c *Client) Stream(ctx context.Context, id, view, lastEventID string, fn func(conversation.Event) error, opts ...StreamOption) error {
	var o streamOptions
	for _, opt := range opts {
		opt(&o)
	}
	delay := minReconnect
	for {
		resp, retry, err := c.openStream(ctx, id, view, lastEventID, o.progress != nil)
		if err == nil {
			before := lastEventID
			var stop error
			lastEventID, stop = readEvents(resp.Body, lastEventID, fn, o.progress)
			resp.Body.Close()
			if stop != nil {
				return stop
			}
			if lastEventID != before {
				delay = minReconnect // it made progress: not a server failing at once
			}
		} else if !retry && ctx.Err() == nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := ctxtime.Sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, maxReconnect)
	}
}

// openStream connects to the event stream. retry says whether a failure
// is worth trying again: a network error, or a gateway or server that is
// not available for now.
func (c *Client) openStream(ctx context.Context, id, view, lastEventID string, progress bool) (resp *http.Response, retry bool, err error) {
	q := url.Values{}
	set(q, "view", view)
	if !progress {
		q.Set("progress", "0")
	}
	h := http.Header{}
	h.Set("Accept", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	if lastEventID != "" {
		h.Set("Last-Event-ID", lastEventID)
	}
	path := processPath(id, "/events/stream")
	req, err := c.newRequest(ctx, http.MethodGet, path, q, h, nil)
	if err != nil {
		return nil, false, err
	}
	resp, err = c.httpClient().Do(req)
	if err != nil {
		return nil, true, fmt.Errorf("api: GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		err := responseError(resp)
		switch resp.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return nil, true, err
		}
		return nil, false, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		resp.Body.Close()
		return nil, false, fmt.Errorf("api: GET %s: the answer is %q, not an event stream", path, ct)
	}
	return resp, false, nil
}

// progressEvent is the type of a stream's progress events.
const progressEvent = "progress"

// readEvents reads server-sent events from body until it ends or fails,
// calling fn with each event of the log and progress (when not nil) with
// each progress update; it returns the id of the last event dispatched and
// a non-nil stop when fn or progress failed or what came did not decode. An
// event cut off by the end of the body is dropped, as the SSE specification
// says: it comes again after the reconnect (a progress update does not).
func readEvents(body io.Reader, last string, fn func(conversation.Event) error, progress func(live.Update) error) (lastID string, stop error) {
	br := bufio.NewReader(body)
	var (
		id    string
		hasID bool
		typ   string // the event field
		data  strings.Builder
		seen  bool // a data line is buffered
	)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return last, nil
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" { // dispatch
			if hasID {
				last = id
			}
			if seen {
				if err := dispatch(typ, id, data.String(), fn, progress); err != nil {
					return last, err
				}
			}
			hasID, seen, typ = false, false, ""
			data.Reset()
			continue
		}
		if line[0] == ':' {
			continue // a comment: the heartbeat
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			if !strings.ContainsRune(value, 0) {
				id, hasID = value, true
			}
		case "event":
			typ = value
		case "data":
			if seen {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			seen = true
		}
	}
}

// dispatch decodes one server-sent event's data and hands it on: a
// progress update to progress (or nowhere when nil), an event of the log
// to fn.
func dispatch(typ, id, data string, fn func(conversation.Event) error, progress func(live.Update) error) error {
	if typ == progressEvent {
		if progress == nil {
			return nil
		}
		var u live.Update
		if err := json.Unmarshal([]byte(data), &u); err != nil {
			return fmt.Errorf("api: progress update: %w", err)
		}
		return progress(u)
	}
	var ev conversation.Event
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		return fmt.Errorf("api: event %s: %w", id, err)
	}
	return fn(ev)
}
