package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/web"
)

// consoleStub is an open API with one process, p_1, behind the real
// console: its event stream writes the frames the test sends, one at a
// time, so that the test drives what the page sees and when.
type consoleStub struct {
	t       *testing.T
	console http.Handler
	frames  chan string

	mu    sync.Mutex
	state string // p_1's
	seq   int    // the last event id's
}

func newConsoleStub(t *testing.T) *consoleStub {
	t.Helper()
	console, err := web.New(web.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &consoleStub{t: t, console: console, frames: make(chan string), state: "RUNNING"}
}

func (s *consoleStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/v1/") {
		s.console.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/processes":
		fmt.Fprint(w, `{"processes":[]}`)
	case "/v1/processes/p_1":
		s.mu.Lock()
		state := s.state
		s.mu.Unlock()
		fmt.Fprintf(w, `{"id":"p_1","recipe":"default","state":%q,"created_at":"2026-03-01T09:00:00Z","updated_at":"2026-03-01T09:00:00Z"}`, state)
	case "/v1/processes/p_1/timers":
		fmt.Fprint(w, `{"timers":[]}`)
	case "/v1/processes/p_1/events/stream":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case f := <-s.frames:
				fmt.Fprint(w, f)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	default:
		http.NotFound(w, r)
	}
}

// send has the stream write a frame; it returns once the stream took it.
func (s *consoleStub) send(frame string) {
	s.t.Helper()
	select {
	case s.frames <- frame:
	case <-time.After(browserTimeout):
		s.t.Fatal("the page's event stream took no frame")
	}
}

// progress sends a progress update of p_1's turn.
func (s *consoleStub) progress(turn string, round int, kind live.Kind, edit ...func(*live.Update)) {
	s.t.Helper()
	u := live.Update{Process: "p_1", Turn: turn, Round: round, Kind: kind, At: time.Now(), User: true}
	for _, e := range edit {
		e(&u)
	}
	data, err := json.Marshal(u)
	if err != nil {
		s.t.Fatal(err)
	}
	s.send("event: progress\ndata: " + string(data) + "\n\n")
}

// event sends a durable event of turn, with the next id.
func (s *consoleStub) event(turn string, e conversation.Event) {
	s.t.Helper()
	s.mu.Lock()
	s.seq++
	e.ID = fmt.Sprintf("%d-0", s.seq)
	s.mu.Unlock()
	e.Turn, e.At = turn, time.Now()
	data, err := json.Marshal(e)
	if err != nil {
		s.t.Fatal(err)
	}
	s.send(fmt.Sprintf("id: %s\nevent: %s\ndata: %s\n\n", e.ID, e.Type, data))
}

func (s *consoleStub) setState(state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = state
}

// TestBrowserProgress drives the console's process page with a stream it
// scripts: the live bubble shows the turn's round and the tool that runs,
// then the answer growing delta by delta in order of offset (a delta after
// a gap is dropped, what arrived stays); the durable answer supersedes it,
// and later progress of that turn is ignored; a message of the model's to
// the user supersedes the text written so far, not the turn; a state
// change out of RUNNING ends a turn, and so does a process that no longer
// runs, read after the progress came.
func TestBrowserProgress(t *testing.T) {
	chromium := requireChromium(t)
	stub := newConsoleStub(t)
	ts := httptest.NewServer(stub)
	t.Cleanup(ts.Close) // after the browser's end, which ends the page's stream
	b := openChromium(t, chromium)
	liveBox := `document.querySelector('#live')`
	liveText := `document.querySelector('#live-text').textContent`
	liveStatus := `document.querySelector('#live-status').textContent`

	b.do("open the process", chromedp.Navigate(ts.URL+"/#/p/p_1"))
	b.poll("the process page", `document.querySelector('#p-state').textContent === 'RUNNING'`)
	stub.event("t1", conversation.NewTurnStart("wake"))
	stub.event("t1", conversation.NewInboxMessage("m1", conversation.KindUser, "user:ada", "What is new?"))
	b.poll("the user's message", `[...document.querySelectorAll('#chat .msg.user')].some((m) => m.textContent.includes('What is new?'))`)
	if hidden := inBrowser(t, b.bctx, b.fail, "the bubble before progress", chromedp.Evaluate[bool](liveBox+`.hidden`)); !hidden {
		t.Error("the live bubble shows before any progress")
	}

	// The round and the tool that runs.
	stub.progress("t1", 1, live.RoundStarted)
	stub.progress("t1", 1, live.ToolStarted, func(u *live.Update) { u.Tool, u.CallID = "http_fetch", "c1" })
	b.poll("the round and the tool", `!`+liveBox+`.hidden && `+liveStatus+`.includes('round 1 · http_fetch running')`)
	stub.progress("t1", 1, live.ToolFinished, func(u *live.Update) { u.Tool, u.CallID = "http_fetch", "c1" })
	b.poll("the tool done", `!`+liveStatus+`.includes('http_fetch')`)

	// The answer grows, in order of offset (bytes: "é" is two).
	answer := func(delta string, offset int) {
		stub.progress("t1", 2, live.Answer, func(u *live.Update) { u.Delta, u.Offset = delta, offset })
	}
	answer("Voilà", 0)
	b.poll("the answer's first words", liveText+` === 'Voilà' && `+liveStatus+`.includes('round 2')`)
	b.shot("progress-1-answer")
	answer(" — it", 6)
	answer("MISSED", 40) // after a gap: dropped
	answer(" grows", 6+len(" — it"))
	b.poll("the answer grown", liveText+` === 'Voilà — it grows'`)

	// The durable answer lands: the bubble goes, the answer is in the chat,
	// and late progress of the turn is ignored (the event after it shows
	// that the page has read it).
	stub.event("t1", conversation.NewToolCallResponse("c2", "respond",
		[]conversation.Block{conversation.TextBlock("Voilà — it grows, and it is done.")}, false))
	b.poll("the answer in the chat, the bubble gone", liveBox+`.hidden &&
		[...document.querySelectorAll('#chat .msg.assistant')].some((m) => m.textContent.includes('it is done.'))`)
	answer(" late", 6+len(" — it grows"))
	stub.progress("t1", 3, live.RoundStarted)
	stub.event("t1", conversation.NewToolCallResponse("c3", "tell_user", []conversation.Block{conversation.TextBlock("A late note.")}, false))
	b.poll("the event after the late progress", `[...document.querySelectorAll('#chat .msg.assistant')].some((m) => m.textContent.includes('A late note.'))`)
	if hidden := inBrowser(t, b.bctx, b.fail, "the bubble after the answer", chromedp.Evaluate[bool](liveBox+`.hidden`)); !hidden {
		t.Error("the live bubble shows the progress of a turn whose answer landed")
	}
	stub.event("t2", conversation.NewTurnStart("wake"))
	stub.event("t2", conversation.NewInboxMessage("m2", conversation.KindUser, "user:ada", "And then?"))

	// A message of the model's supersedes the text written so far, not the
	// turn; a state change out of RUNNING ends it.
	stub.progress("t2", 1, live.Text, func(u *live.Update) { u.Delta = "Checking." })
	b.poll("the text", liveText+` === 'Checking.'`)
	stub.event("t2", conversation.NewChatMessage("Checking."))
	b.poll("the text gone, the turn still shown", `!`+liveBox+`.hidden && `+liveText+` === ''`)
	stub.progress("t2", 2, live.Answer, func(u *live.Update) { u.Delta = "Then this." })
	b.poll("the next round's answer", liveText+` === 'Then this.'`)
	stub.event("t2", conversation.NewStateChange("RUNNING", "BLOCKED", "await_user"))
	b.poll("the turn's end", liveBox+`.hidden`)

	// A process read as no longer running after the progress came: the turn
	// that sent it is over (the user view has no state changes).
	stub.event("t3", conversation.NewTurnStart("wake"))
	stub.progress("t3", 1, live.Answer, func(u *live.Update) { u.Delta = "Almost" })
	b.poll("the third turn's answer", liveText+` === 'Almost'`)
	stub.setState("BLOCKED")
	b.poll("the bubble gone once the process is read BLOCKED", liveBox+`.hidden && document.querySelector('#p-state').textContent === 'BLOCKED'`)
	b.shot("progress-2-ended")
}
