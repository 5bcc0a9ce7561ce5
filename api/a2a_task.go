package api

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// contextKey is the metadata key of a process that keeps its A2A contextId.
const contextKey = "a2a_context_id"

// taskLog is what a task shows of a process's log, read event by event:
// its history (the user view as A2A messages), its artifacts and the facts
// its status needs. A stream adds the events as they come.
type taskLog struct {
	pid       string
	after     string // the last event read
	started   bool   // a turn has started
	stopped   bool   // DONE came from a stop, not from a turn's end
	history   []a2aMessage
	artifacts []a2aArtifact
	// answer is the index in history of the agent's last message of the
	// newest turn, -1 when that turn has none (yet): the status message
	// of a task that waits for input is its own turn's answer, not an
	// older one.
	answer int
}

func newTaskLog(pid string) *taskLog { return &taskLog{pid: pid, answer: -1} }

// add reads events, in log order, and returns the artifacts they made.
func (t *taskLog) add(events []conversation.Event) []a2aArtifact {
	if len(events) == 0 {
		return nil
	}
	t.after = events[len(events)-1].ID
	first := len(t.artifacts)
	for i := range events {
		e := &events[i]
		switch e.Type {
		case conversation.TypeTurnStart:
			t.started = true
			t.answer = -1
		case conversation.TypeStateChange:
			if c := e.StateChange; c != nil && c.To == string(lifecycle.Done) {
				// A turn's own end carries its turn id; a stop does not.
				t.stopped = e.Turn == ""
			}
		case conversation.TypeToolCallRequest:
			if r := e.ToolCallRequest; r != nil && r.Name == "finish_task" {
				var args struct {
					Result string `json:"result"`
					Status string `json:"status"`
				}
				if json.Unmarshal(r.Arguments, &args) == nil && args.Result != "" {
					t.artifacts = append(t.artifacts, a2aArtifact{ArtifactID: "result-" + r.CallID, Name: "result",
						Parts: []a2aPart{textPart(args.Result)}, Metadata: map[string]any{"status": args.Status}})
				}
			}
		}
	}
	for _, e := range conversation.UserView(events) {
		switch e.Type {
		case conversation.TypeInboxMessage:
			m := e.InboxMessage
			t.history = append(t.history, a2aMessage{MessageID: m.MessageID, TaskID: t.pid, Role: roleUser,
				Parts: []a2aPart{textPart(m.Content)}})
		case conversation.TypeChatResponse:
			c := e.ChatResponse
			var p a2aPart
			if c.Variant == conversation.VariantStructured {
				p = a2aPart{Data: c.Structured}
			} else {
				p = textPart(c.Text)
			}
			t.agent(e.ID, []a2aPart{p}, c.Citations)
		case conversation.TypeToolCallResponse:
			r := e.ToolCallResponse
			var parts []a2aPart
			for _, b := range r.Content {
				if b.Type == conversation.BlockText {
					parts = append(parts, a2aPart{Text: &b.Text, MediaType: b.MimeType})
				}
			}
			if len(parts) > 0 {
				t.agent(e.ID, parts, r.Citations)
			}
		case conversation.TypePresentation:
			p := e.Presentation
			data, _ := json.Marshal(map[string]any{"summary": p.Summary, "blocks": p.Blocks})
			parts := []a2aPart{{Data: data, MediaType: "application/json"}}
			if p.Markdown != "" {
				parts = append(parts, a2aPart{Text: &p.Markdown, MediaType: "text/markdown"})
			}
			t.artifacts = append(t.artifacts, a2aArtifact{ArtifactID: "presentation-" + p.CallID, Name: "present_results",
				Description: p.Summary, Parts: parts})
		}
	}
	return t.artifacts[first:]
}

// agent adds a message of the agent; citations go in its metadata.
func (t *taskLog) agent(id string, parts []a2aPart, citations []conversation.Citation) {
	m := a2aMessage{MessageID: id, TaskID: t.pid, Role: roleAgent, Parts: parts}
	if len(citations) > 0 {
		m.Metadata = map[string]any{"citations": citations}
	}
	t.history = append(t.history, m)
	t.answer = len(t.history) - 1
}

// readTaskLog reads the whole log of process pid.
func (s *Server) readTaskLog(ctx context.Context, pid string) (*taskLog, error) {
	t := newTaskLog(pid)
	_, err := s.catchUp(ctx, t)
	return t, err
}

// catchUp reads the events of t's log after those it has read, and
// returns the artifacts they made. A record read before catchUp is never
// newer than t: a turn's commit writes its events and its state at once.
func (s *Server) catchUp(ctx context.Context, t *taskLog) ([]a2aArtifact, error) {
	var made []a2aArtifact
	for {
		evs, err := s.cfg.Backend.Log(ctx, t.pid, t.after, backlogPage)
		if err != nil {
			return nil, err
		}
		made = append(made, t.add(evs)...)
		if len(evs) < backlogPage {
			return made, nil
		}
	}
}

// contextOf is a process's A2A contextId: the one it was created with, or
// its own id for a process not created over A2A.
func contextOf(rec store.Record) string {
	if c := rec.Metadata[contextKey]; c != "" {
		return c
	}
	return rec.ID
}

// status maps a process's state onto A2A's:
//
//	READY before its first turn  submitted
//	READY after one, RUNNING     working
//	PAUSED                       working, with a message saying so
//	BLOCKED                      input-required, with respond's message
//	DONE                         completed; canceled when stopped
//	FAILED                       failed
func (t *taskLog) status(rec store.Record) a2aTaskStatus {
	st := a2aTaskStatus{Timestamp: rec.UpdatedAt.UTC().Format(time.RFC3339Nano)}
	ctx := contextOf(rec)
	switch rec.Status.State {
	case lifecycle.Ready:
		st.State = taskWorking
		if !t.started {
			st.State = taskSubmitted
		}
	case lifecycle.Running:
		st.State = taskWorking
	case lifecycle.Paused:
		st.State = taskWorking
		st.Message = &a2aMessage{MessageID: "paused-" + rec.UpdatedAt.UTC().Format("20060102T150405.000"), TaskID: rec.ID, ContextID: ctx,
			Role: roleAgent, Parts: []a2aPart{textPart("paused by an operator; the task goes on when an operator resumes it")}}
	case lifecycle.Blocked:
		st.State = taskInputRequired
		st.Message = t.lastMessage(ctx)
	case lifecycle.Done:
		st.State = taskCompleted
		if t.stopped {
			st.State = taskCanceled
		}
		st.Message = t.lastMessage(ctx)
	case lifecycle.Failed:
		st.State = taskFailed
	}
	return st
}

func (t *taskLog) lastMessage(ctx string) *a2aMessage {
	if t.answer < 0 {
		return nil
	}
	m := t.history[t.answer]
	m.ContextID = ctx
	return &m
}

// task returns process rec as an A2A task with the last historyLength
// messages of its history (nil: all of them).
func (t *taskLog) task(rec store.Record, historyLength *int, artifacts bool) a2aTask {
	ctx := contextOf(rec)
	task := a2aTask{ID: rec.ID, ContextID: ctx, Status: t.status(rec),
		Metadata: map[string]any{"recipe": rec.Recipe, "state": string(rec.Status.State)}}
	h := t.history
	if historyLength != nil && *historyLength < len(h) {
		h = h[len(h)-max(*historyLength, 0):]
	}
	for _, m := range h {
		m.ContextID = ctx
		task.History = append(task.History, m)
	}
	if artifacts {
		task.Artifacts = t.artifacts
	}
	return task
}

// final reports whether a stream of the task ends at state: a terminal
// state, or input-required, where the agent waits for the client's next
// message (which opens a stream of its own).
func final(state string) bool {
	switch state {
	case taskCompleted, taskFailed, taskCanceled, taskInputRequired:
		return true
	}
	return false
}

// terminal reports whether a task in state takes no more messages.
func terminal(state string) bool {
	return state == taskCompleted || state == taskFailed || state == taskCanceled
}

// taskStateParam maps an A2A state of ListTasks's status filter; "" is any.
func taskStateParam(s string) (string, bool) {
	switch v := strings.ToUpper(s); v {
	case "", "TASK_STATE_UNSPECIFIED":
		return "", true
	case taskSubmitted, taskWorking, taskInputRequired, taskCompleted, taskFailed, taskCanceled:
		return v, true
	}
	return "", false
}
