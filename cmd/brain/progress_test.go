package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/tools"
)

// step is what reaches a progressView: an update, or a durable event with
// the state read after it.
type step struct {
	update *live.Update
	event  *conversation.Event
	state  string
}

func progressOf(turn string, round int, kind live.Kind, edit ...func(*live.Update)) step {
	u := live.Update{Process: "p_1", Turn: turn, Round: round, Kind: kind, At: time.Unix(0, 0)}
	for _, e := range edit {
		e(&u)
	}
	return step{update: &u}
}

func answered(text string, offset int) func(*live.Update) {
	return func(u *live.Update) { u.Delta, u.Offset = text, offset }
}

func calling(name, call string, failed bool) func(*live.Update) {
	return func(u *live.Update) { u.Tool, u.CallID, u.IsError = name, call, failed }
}

func landedEvent(turn string, e conversation.Event, state string) step {
	e.Turn = turn
	return step{event: &e, state: state}
}

func respondResult(text string) conversation.Event {
	return conversation.NewToolCallResponse("c9", tools.Respond, []conversation.Block{conversation.TextBlock(text)}, false)
}

// play feeds steps to a progressView as `brain logs -f` does, printing a
// durable event as "[event type]", and returns what it wrote.
func play(tty bool, steps []step) string {
	var out bytes.Buffer
	p := newProgressView(&out, tty)
	for _, s := range steps {
		if s.update != nil {
			p.update(*s.update)
			continue
		}
		p.landed(s.event, func() string {
			fmt.Fprintf(&out, "[%s]\n", s.event.Type)
			return s.state
		})
	}
	p.hide()
	return out.String()
}

// A turn's progress, where stdout is no terminal: a line at each step, not
// one per piece of text; the durable answer, or the turn's end, supersedes
// the turn, whose later progress is ignored.
func TestProgressLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		steps []step
		want  string
	}{{
		name: "a turn with a tool and an answer",
		steps: []step{
			progressOf("t1", 1, live.RoundStarted),
			progressOf("t1", 1, live.Text, answered("Let me look.", 0)),
			progressOf("t1", 1, live.Text, answered(" More.", 12)),
			progressOf("t1", 1, live.ToolStarted, calling("http_fetch", "c1", false)),
			progressOf("t1", 1, live.ToolFinished, calling("http_fetch", "c1", true)),
			progressOf("t1", 2, live.RoundStarted),
			progressOf("t1", 2, live.Answer, answered("Hel", 0)),
			progressOf("t1", 2, live.Answer, answered("lo", 3)),
			landedEvent("t1", respondResult("Hello"), ""),
			progressOf("t1", 2, live.Answer, answered("!", 5)), // late: the answer landed
			progressOf("t1", 3, live.RoundStarted),
		},
		want: "… round 1\n… round 1 · writing\n… round 1 · http_fetch running\n… round 1 · http_fetch failed\n" +
			"… round 2\n… round 2 · answering\n[tool_call_response]\n",
	}, {
		name: "a turn ends out of RUNNING; the next one shows",
		steps: []step{
			progressOf("t1", 1, live.RoundStarted),
			landedEvent("t1", conversation.NewStateChange("RUNNING", "FAILED", "fail"), ""),
			progressOf("t1", 1, live.ToolStarted, calling("http_fetch", "c1", false)),
			progressOf("t2", 1, live.RoundStarted),
		},
		want: "… round 1\n[state_change]\n… round 1\n",
	}, {
		name: "a state read after the progress that is not RUNNING ends the turn",
		steps: []step{
			progressOf("t1", 1, live.ToolStarted, calling("http_fetch", "c1", false)),
			landedEvent("t1", conversation.NewInboxMessage("m1", conversation.KindUser, "user:ada", "hi"), "BLOCKED"),
			progressOf("t1", 1, live.ToolFinished, calling("http_fetch", "c1", false)),
		},
		want: "… round 1\n… round 1 · http_fetch running\n[inbox_message]\n",
	}, {
		name: "a message to the user supersedes the text, not the turn",
		steps: []step{
			progressOf("t1", 1, live.Text, answered("Looking", 0)),
			landedEvent("t1", conversation.NewChatMessage("Looking"), ""),
			progressOf("t1", 1, live.Text, answered(" around", 7)), // late: dropped, the text is gone
			progressOf("t1", 2, live.RoundStarted),
		},
		want: "… round 1\n… round 1 · writing\n[chat_response]\n… round 2\n",
	}, {
		name: "a turn that starts ends the one shown",
		steps: []step{
			progressOf("t1", 1, live.RoundStarted),
			landedEvent("t2", conversation.NewTurnStart("wake"), ""),
			progressOf("t1", 1, live.ToolStarted, calling("http_fetch", "c1", false)), // late
			progressOf("t2", 1, live.ToolStarted, calling("http_fetch", "c2", false)),
		},
		want: "… round 1\n[turn_start]\n… round 1\n… round 1 · http_fetch running\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, play(false, tc.steps)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// On a terminal the progress is one status line, rewritten in place with a
// carriage return, taken away while a durable event prints and after the
// turn's end; it shows the answer as it grows, dropping a delta after a
// gap, and the text goes once a message of the model's lands.
func TestProgressStatusLine(t *testing.T) {
	t.Parallel()
	got := play(true, []step{
		progressOf("t1", 1, live.RoundStarted),
		progressOf("t1", 1, live.ToolStarted, calling("http_fetch", "c1", false)),
		landedEvent("t1", conversation.NewToolCallRequest("c1", "http_fetch", nil), ""),
		progressOf("t1", 1, live.ToolFinished, calling("http_fetch", "c1", false)),
		progressOf("t1", 2, live.Answer, answered("Hello", 0)),
		progressOf("t1", 2, live.Answer, answered(", world", 5)),
		progressOf("t1", 2, live.Answer, answered("!", 13)), // after a gap: dropped
		landedEvent("t1", respondResult("Hello, world"), ""),
		progressOf("t2", 1, live.Text, answered("Looking", 0)),
		landedEvent("t2", conversation.NewChatMessage("Looking"), ""),
		progressOf("t2", 1, live.Text, answered(" around", 7)), // late: the text landed
	})
	const cr, erase = "\r", "\x1b[K"
	want := cr + "… round 1" + erase +
		cr + "… round 1 · http_fetch running" + erase +
		cr + erase + "[tool_call_request]\n" + cr + "… round 1 · http_fetch running" + erase +
		cr + "… round 1" + erase +
		cr + "… round 2 · answering: Hello" + erase +
		cr + "… round 2 · answering: Hello, world" + erase +
		cr + erase + "[tool_call_response]\n" +
		cr + "… round 1 · writing: Looking" + erase +
		cr + erase + "[chat_response]\n" + cr + "… round 1" + erase +
		cr + erase
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("terminal output (-want +got):\n%s", diff)
	}
}

// The status line never outgrows statusWidth: a long answer shows its
// tail, one line.
func TestProgressStatusLineClips(t *testing.T) {
	t.Parallel()
	p := newProgressView(&bytes.Buffer{}, true)
	p.update(*progressOf("t1", 3, live.Answer, answered(strings.Repeat("word ", 40)+"\nthe end", 0)).update)
	s := p.status()
	if n := len([]rune(s)); n != statusWidth || !strings.HasPrefix(s, "… round 3 · answering: …") || !strings.HasSuffix(s, "word the end") {
		t.Errorf("status %q (%d runes), want the answer's tail on %d runes", s, n, statusWidth)
	}
}

// brain logs -f shows the progress the stream carries between the events,
// ignoring what comes of a turn once its answer landed; --no-progress asks
// the server for none.
func TestClientLogsFollowProgress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag string
		want string
	}{
		{"", "[state] RUNNING\n--- turn t1\n… round 1\n… round 1 · answering\nassistant: Hello, world\nuser: thanks\n"},
		{"--no-progress", "[state] RUNNING\n--- turn t1\nassistant: Hello, world\nuser: thanks\n"},
	} {
		t.Run("flag "+tc.flag, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv := &streamStub{done: cancel}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			env := func(k string) string {
				if k == "BRAIN_URL" {
					return ts.URL
				}
				return ""
			}
			args := []string{"p_1", "-f"}
			if tc.flag != "" {
				args = append(args, tc.flag)
			}
			var out, errOut bytes.Buffer
			if code := runClient(ctx, "logs", args, env, &out, &errOut); code != 0 {
				t.Fatalf("brain logs -f: exit %d, stderr %s", code, errOut.String())
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if want := tc.flag == ""; srv.progress != want {
				t.Errorf("the stream was asked for progress: %v, want %v", srv.progress, want)
			}
		})
	}
}

// streamStub is an API with one RUNNING process, p_1, whose stream sends a
// turn's start, its progress (unless asked for none), its answer, a late
// update of that turn, and a user's message, then ends. The client's
// reconnect after the message shows that it has handled all of it: the
// stub calls done then.
type streamStub struct {
	done func()

	mu       sync.Mutex
	progress bool // the stream was asked for progress
}

func (s *streamStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/processes/p_1":
		fmt.Fprint(w, `{"id":"p_1","recipe":"default","state":"RUNNING"}`)
	case "/v1/processes/p_1/events":
		fmt.Fprint(w, `{"events":[],"next":""}`)
	case "/v1/processes/p_1/events/stream":
		if r.Header.Get("Last-Event-ID") == "3-0" {
			s.done()
			<-r.Context().Done()
			return
		}
		s.mu.Lock()
		s.progress = r.URL.Query().Get("progress") != "0"
		withProgress := s.progress
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(id, turn string, e conversation.Event) {
			e.ID, e.Turn = id, turn
			data, _ := json.Marshal(e)
			fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", e.ID, e.Type, data)
		}
		progress := func(st step) {
			if withProgress {
				data, _ := json.Marshal(st.update)
				fmt.Fprintf(w, "event: progress\ndata: %s\n\n", data)
			}
		}
		event("1-0", "t1", conversation.NewTurnStart("wake"))
		progress(progressOf("t1", 1, live.RoundStarted))
		progress(progressOf("t1", 1, live.Answer, answered("Hello", 0)))
		progress(progressOf("t1", 1, live.Answer, answered(", world", 5)))
		event("2-0", "t1", respondResult("Hello, world"))
		progress(progressOf("t1", 1, live.ToolStarted, calling("http_fetch", "c1", false))) // late: ignored
		event("3-0", "t2", conversation.NewInboxMessage("m2", conversation.KindUser, "user:ada", "thanks"))
	default:
		http.NotFound(w, r)
	}
}

// An answer whose model call is asked again (a retry) streams again from
// offset 0: the status line starts it over instead of keeping the cut one.
func TestProgressAnswerAskedAgain(t *testing.T) {
	t.Parallel()
	p := newProgressView(&bytes.Buffer{}, true)
	p.update(*progressOf("t1", 1, live.Answer, answered("Hel", 0)).update)
	p.update(*progressOf("t1", 1, live.Answer, answered("Hello", 0)).update)
	p.update(*progressOf("t1", 1, live.Answer, answered(" there", 5)).update)
	if s := p.status(); !strings.HasSuffix(s, "answering: Hello there") {
		t.Errorf("status %q, want the answer asked again, whole", s)
	}
}
