package llmtest

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Reply is one answer of a Replayer.
type Reply struct {
	Status int
	Header map[string]string
	Body   string
	// CutAfter, when > 0, sends only that many bytes of Body and then drops
	// the connection (the response declares the whole length).
	CutAfter int
	// Hold sends Body and then keeps the stream open until the request is
	// cancelled.
	Hold bool
}

// Received is a request a Replayer got.
type Received struct {
	Path, Query string
	Header      http.Header
	Body        []byte
}

// Replayer is a fake provider API: POSTs to one of Paths get Replies in
// order, and past the last Exhausted; any other request gets a 404. Every
// request is recorded. A 200 reply is an event stream; any other without a
// Content-Type header gets ErrorContentType ("application/json" when
// empty).
type Replayer struct {
	Paths            []string
	Replies          []Reply
	Exhausted        Reply
	ErrorContentType string

	mu  sync.Mutex
	got []Received
}

func (f *Replayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.got)
	f.got = append(f.got, Received{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	rep := f.Exhausted
	if n < len(f.Replies) {
		rep = f.Replies[n]
	}
	f.mu.Unlock()

	if r.Method != http.MethodPost || !slices.Contains(f.Paths, r.URL.Path) {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	switch {
	case rep.Status == http.StatusOK:
		w.Header().Set("Content-Type", "text/event-stream")
	case w.Header().Get("Content-Type") == "" && f.ErrorContentType != "":
		w.Header().Set("Content-Type", f.ErrorContentType)
	case w.Header().Get("Content-Type") == "":
		w.Header().Set("Content-Type", "application/json")
	}
	if rep.CutAfter > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(rep.Body)))
		w.WriteHeader(rep.Status)
		_, _ = io.WriteString(w, rep.Body[:rep.CutAfter])
		return // short of Content-Length: the server drops the connection
	}
	w.WriteHeader(rep.Status)
	_, _ = io.WriteString(w, rep.Body)
	if rep.Hold {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// Requests returns what the server received, in order.
func (f *Replayer) Requests() []Received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// Waits is an adapter's Sleep that returns at once and records the wait
// asked for: back-off is checked without sleeping.
type Waits struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep records d and returns ctx's error.
func (w *Waits) Sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

// All returns the waits recorded so far.
func (w *Waits) All() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.d)
}
