package engines

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
)

// Session plays a process in memory, turn after turn, with no Redis: the
// bench of `brain recipe test`, golden transcripts and examples. It fires
// the lifecycle events a node would fire and logs them as state changes.
// A Session is used by one goroutine.
type Session struct {
	Engine Engine
	// Clock stamps the events the session writes (time.Now when nil).
	Clock func() time.Time
	// Turn carries the recipe, model and tools; its ID, History and
	// Current are set by the session for every turn.
	Turn   Turn
	Status lifecycle.Status
	// Log is the process's whole conversation log.
	Log []conversation.Event

	inbox []conversation.Event
	turns int
	msgs  int
}

// NewSession returns a session of a new process whose turns e plays,
// BLOCKED until its first message arrives; clock stamps the session's own
// events (time.Now when nil).
func NewSession(e Engine, t Turn, clock func() time.Time) *Session {
	return &Session{Engine: e, Clock: clock, Turn: t, Status: lifecycle.Status{State: lifecycle.Blocked}}
}

func (s *Session) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

// Post puts a message into the inbox, and lets it unblock the process when
// the lifecycle allows (a user or operator message to a BLOCKED process).
func (s *Session) Post(ctx context.Context, kind conversation.Kind, from, content string) error {
	s.msgs++
	msg := conversation.NewInboxMessage(strconv.Itoa(s.msgs), kind, from, content)
	msg.At, msg.By = s.now(), from
	s.inbox = append(s.inbox, msg)
	if s.Status.State == lifecycle.Blocked && (kind == conversation.KindUser || kind == conversation.KindOperator) {
		return s.fire(ctx, lifecycle.UserInput, from, "")
	}
	return nil
}

// Say posts a user message and plays the turns it causes.
func (s *Session) Say(ctx context.Context, from, content string) ([]Outcome, error) {
	if err := s.Post(ctx, conversation.KindUser, from, content); err != nil {
		return nil, err
	}
	return s.Run(ctx)
}

// StepClock returns a clock for reproducible logs: every call returns the
// previous time plus one second, starting one second after start.
func StepClock(start time.Time) func() time.Time {
	return func() time.Time {
		start = start.Add(time.Second)
		return start
	}
}

// Run plays turns while the process is READY with messages in its inbox.
// It returns the outcomes of the turns it played.
func (s *Session) Run(ctx context.Context) ([]Outcome, error) {
	var outs []Outcome
	for s.Status.State == lifecycle.Ready && len(s.inbox) > 0 {
		out, err := s.turn(ctx)
		if err != nil {
			return outs, err
		}
		outs = append(outs, out)
	}
	return outs, nil
}

func (s *Session) turn(ctx context.Context) (Outcome, error) {
	s.turns++
	id := "t" + strconv.Itoa(s.turns)
	if err := s.fire(ctx, lifecycle.Wake, "node:session", id); err != nil {
		return Outcome{}, err
	}
	// The drain: the turn starts with every pending message, as a node's
	// claim of a wake does.
	history := s.Log
	start := conversation.NewTurnStart("wake")
	start.At, start.By = s.now(), "node:session"
	s.Log = append(s.Log, start)
	s.Log = append(s.Log, s.inbox...)
	s.inbox = nil
	current := s.Log[len(history):]
	for i := range current {
		current[i].Turn = id
	}
	t := s.Turn
	t.ID, t.History, t.Current = id, history, current
	out, err := s.Engine.Run(ctx, &t, CheckpointFunc(func(_ context.Context, evs []conversation.Event) error {
		s.Log = append(s.Log, evs...)
		return nil
	}))
	if err != nil {
		return Outcome{}, err
	}
	s.Log = append(s.Log, out.Pending...)
	if err := s.fire(ctx, out.Next, "engine", id); err != nil {
		return Outcome{}, err
	}
	return out, nil
}

func (s *Session) fire(ctx context.Context, ev lifecycle.Event, by, turn string) error {
	tr, st, err := lifecycle.Fire(ctx, s.Status, ev, by, s.now())
	if err != nil {
		return fmt.Errorf("engines: session: %w", err)
	}
	s.Status = st
	change := conversation.NewStateChange(string(tr.From), string(tr.To), string(tr.Event))
	change.At, change.By, change.Turn = tr.At, tr.By, turn
	s.Log = append(s.Log, change)
	return nil
}
