package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/live"
)

// An exchange of the OpenAI-compatible face is one user message to a
// process and the turn that answers it. The message's inbox id names the
// exchange: the turn that drains the message is the one that answers it,
// whenever it runs, so that a request repeated with its Idempotency-Key
// (which Send answers with the first message's id) gets the same answer.

// posted is a message posted to a process.
type posted struct {
	pid, msgID string
	recipe     string
	// updates are the progress of the process's turns, watched before the
	// message was posted (nil when not streamed).
	updates <-chan live.Update
	stop    context.CancelFunc
}

// answered is what the turn that drained an exchange's message did.
type answered struct {
	turn    string
	started time.Time
	// end is the state the turn left the process in.
	end    lifecycle.State
	answer string
	input  int64
	output int64
}

// exchangeID is the id of the response to message msgID of process pid;
// parseExchangeID reads it back.
func exchangeID(prefix, pid, msgID string) string {
	return prefix + base64.RawURLEncoding.EncodeToString([]byte(pid+"\x00"+msgID))
}

func parseExchangeID(prefix, id string) (pid, msgID string, ok bool) {
	rest, found := strings.CutPrefix(id, prefix)
	if !found {
		return "", "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return "", "", false
	}
	pid, msgID, ok = strings.Cut(string(raw), "\x00")
	return pid, msgID, ok && pid != "" && msgID != "" && validCursor("0:"+pid)
}

// post posts content as the user's message to process pid, or to a new
// process of recipe when pid is "". A new process is created waiting for
// the user and then sent the message, so that a stream watches its progress
// from the first turn. With watch the process's progress is watched from
// before the message; the exchange's stop ends the watch.
func (s *Server) post(ctx context.Context, log *zap.Logger, who identity, pid, recipe, content, key string, metadata map[string]string, watch bool) (posted, error) {
	if pid == "" {
		rec, err := s.cfg.Backend.Create(ctx, brain.NewProcess{Recipe: recipe, Owner: who.name, Metadata: metadata, IdempotencyKey: key})
		if err != nil && rec.ID == "" {
			return posted{}, err
		}
		if err != nil {
			log.Error("process created without all its schedules", zap.String("process", rec.ID), zap.Error(err))
		}
		pid = rec.ID
	}
	x := posted{pid: pid, recipe: recipe, stop: func() {}}
	if watch {
		wctx, cancel := context.WithCancel(ctx)
		updates, err := s.cfg.Backend.Watch(wctx, pid)
		if err != nil {
			cancel()
			log.Warn("progress watch failed; the response streams its answer at the end of the turn", zap.String("process", pid), zap.Error(err))
		} else {
			x.updates, x.stop = updates, cancel
		}
	}
	id, err := s.cfg.Backend.Send(ctx, pid, who.userFrom(), content, key)
	if err != nil {
		x.stop()
		return posted{}, err
	}
	x.msgID = id
	return x, nil
}

// searchFrom is where in the log the turn that drains message msgID is
// looked for: log and inbox ids are both Redis stream ids stamped by the
// same server, and the turn's events are appended after the message, so
// they come after its millisecond. An id of another shape searches from
// the start.
func searchFrom(msgID string) string {
	ms, _, _ := strings.Cut(msgID, "-")
	n, err := strconv.ParseUint(ms, 10, 64)
	if err != nil || !validEventID(msgID) || n == 0 {
		return ""
	}
	return strconv.FormatUint(n-1, 10)
}

// await follows the process's log until the turn that drains the
// exchange's message has ended, and returns what it answered. Meanwhile
// delta gets the answer as it is written (the user-visible answer and text
// updates of that turn), when the exchange watches progress.
func (s *Server) await(ctx context.Context, x posted, delta func(string) error) (answered, error) {
	ctx, cancel := context.WithCancel(ctx)
	followed := make(chan batch)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.follow(ctx, x.pid, searchFrom(x.msgID), followed)
	}()
	defer func() {
		cancel()
		<-done
		x.stop()
	}()
	t := turnTrace{msgID: x.msgID, calls: map[string]json.RawMessage{}}
	var pending []live.Update // updates that came before the turn was known
	var d deltas
	emit := func(u live.Update) error {
		if s := d.add(u); s != "" && delta != nil {
			return delta(s)
		}
		return nil
	}
	updates := x.updates
	for {
		select {
		case <-ctx.Done():
			return answered{}, ctx.Err()
		case b := <-followed:
			if b.err != nil {
				return answered{}, b.err
			}
			for _, e := range b.events {
				known := t.turn != ""
				if t.add(e) {
					a := t.result()
					if delta != nil && strings.HasPrefix(a.answer, d.written) && len(a.answer) > len(d.written) {
						// What the progress did not carry (it is ephemeral).
						if err := delta(a.answer[len(d.written):]); err != nil {
							return answered{}, err
						}
					}
					return a, nil
				}
				if !known && t.turn != "" {
					for _, u := range pending {
						if u.Turn == t.turn {
							if err := emit(u); err != nil {
								return answered{}, err
							}
						}
					}
					pending = nil
				}
			}
		case u, ok := <-updates:
			switch {
			case !ok:
				updates = nil
			case !u.User || u.Kind != live.Answer && u.Kind != live.Text:
			case t.turn == "":
				pending = append(pending, u)
			case u.Turn == t.turn:
				if err := emit(u); err != nil {
					return answered{}, err
				}
			}
		}
	}
}

// deltas joins the answer's progress into text written once: an update
// that repeats what was written (a model call asked again) adds only what
// is new.
type deltas struct {
	segment string // the round, kind and call the offsets count in
	base    int    // the length of written when the segment began
	written string
}

func (d *deltas) add(u live.Update) string {
	seg := strconv.Itoa(u.Round) + "\x00" + string(u.Kind) + "\x00" + u.CallID
	if seg != d.segment {
		d.segment, d.base = seg, len(d.written)
	}
	at := len(d.written) - d.base // how much of this segment was written
	end := u.Offset + len(u.Delta)
	if end <= at || u.Offset > at {
		return "" // repeated, or after a gap: the answer at the end fills it
	}
	s := u.Delta[at-u.Offset:]
	d.written += s
	return s
}

// turnTrace reads a log until the turn that drained message msgID ends.
type turnTrace struct {
	msgID   string
	turn    string
	started time.Time
	answers []string
	calls   map[string]json.RawMessage // finish_task's arguments, by call id
	input   int64
	output  int64
	end     lifecycle.State
}

// add reads e and reports whether the turn has ended.
func (t *turnTrace) add(e conversation.Event) bool {
	if t.turn == "" {
		if m := e.InboxMessage; m != nil && m.MessageID == t.msgID && e.Turn != "" {
			t.turn, t.started = e.Turn, e.At
		}
		return false
	}
	if e.Turn != t.turn {
		return false
	}
	switch {
	case e.ModelUsage != nil:
		t.input += int64(e.ModelUsage.InputTokens)
		t.output += int64(e.ModelUsage.OutputTokens)
	case e.ToolCallRequest != nil && e.ToolCallRequest.Name == finishTask:
		t.calls[e.ToolCallRequest.CallID] = e.ToolCallRequest.Arguments
	case e.ToolCallResponse != nil && !e.ToolCallResponse.IsError:
		t.toolAnswer(e.ToolCallResponse)
	case e.ChatResponse != nil && e.ChatResponse.Variant == conversation.VariantMessage &&
		e.ChatResponse.AddressedTo(conversation.RoleUser) && strings.TrimSpace(e.ChatResponse.Text) != "":
		t.answers = append(t.answers, e.ChatResponse.Text)
	case e.StateChange != nil && e.StateChange.From == string(lifecycle.Running):
		t.end = lifecycle.State(e.StateChange.To)
		return true
	}
	return false
}

// The tools whose result is a turn's answer.
const (
	respondTool = "respond"
	finishTask  = "finish_task"
)

// toolAnswer keeps the answer an ending tool delivered: respond's
// user-addressed text, finish_task's result.
func (t *turnTrace) toolAnswer(r *conversation.ToolCallResponse) {
	switch r.Name {
	case respondTool:
		var parts []string
		for _, b := range r.Content {
			if b.Type == conversation.BlockText && b.ForUser() && b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		if len(parts) > 0 {
			t.answers = append(t.answers, strings.Join(parts, "\n\n"))
		}
	case finishTask:
		var args struct {
			Result string `json:"result"`
		}
		if json.Unmarshal(t.calls[r.CallID], &args) == nil && args.Result != "" {
			t.answers = append(t.answers, args.Result)
		}
	}
}

func (t *turnTrace) result() answered {
	return answered{turn: t.turn, started: t.started, end: t.end, answer: strings.Join(t.answers, "\n\n"), input: t.input, output: t.output}
}

// responseStatus is the Responses status of a turn that left the process in state
// st, and the reason of an incomplete one: completed when the process
// waits for the user (BLOCKED) or is DONE; else incomplete, its reason
// naming the state: process_working (READY: it works on, after
// respond(false); its later turns answer in the conversation),
// process_failed, process_paused.
func responseStatus(st lifecycle.State) (string, string) {
	switch st {
	case lifecycle.Blocked, lifecycle.Done:
		return "completed", ""
	case lifecycle.Ready:
		return "incomplete", "process_working"
	}
	return "incomplete", "process_" + strings.ToLower(string(st))
}
