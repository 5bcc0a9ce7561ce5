package engines

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
)

// Session plays a process in memory, turn after turn, with no Redis: the
// bench of `brain recipe test`, golden transcripts and examples. Its inbox
// is an inbox.Memory, which applies the wake rule as the store does; the
// session fires the lifecycle events a node would fire and logs every
// transition as a state change. A Session is used by one goroutine.
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

	// Approvals are the tool calls the process waits for a decision on
	// (Decide), as a node's record holds them.
	Approvals []conversation.PendingCall

	inbox *inbox.Memory
	turns int
	turn  string // the id of the turn running, if any
}

// sessionPID names the session's process in its inbox.
const sessionPID = "session"

// NewSession returns a session of a new process whose turns e plays,
// BLOCKED until its first message arrives; clock stamps the session's own
// events (time.Now when nil).
func NewSession(e Engine, t Turn, clock func() time.Time) *Session {
	s := &Session{Engine: e, Clock: clock, Turn: t, Status: lifecycle.Status{State: lifecycle.Blocked}}
	s.inbox = inbox.NewMemory(inbox.MemoryConfig{
		Clock:        s.now,
		OnTransition: func(_ string, tr lifecycle.Transition) { s.logChange(tr) },
	})
	steering := inbox.SteeringQueue
	if t.Recipe != nil {
		steering = t.Recipe.Steering.User()
	}
	if err := s.inbox.Create(sessionPID, s.Status, steering); err != nil {
		panic("engines: session: " + err.Error()) // a new memory holds no process
	}
	return s
}

func (s *Session) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

// Post puts a message into the inbox, where the wake rule judges it: a
// user or operator message unblocks a BLOCKED process, a DONE or FAILED
// one takes none (inbox.ErrClosed).
func (s *Session) Post(ctx context.Context, kind conversation.Kind, from, content string) error {
	_, _, err := s.inbox.Post(ctx, sessionPID, inbox.Message{Kind: kind, From: from, Content: content})
	s.sync()
	if err != nil {
		return fmt.Errorf("engines: session: %w", err)
	}
	return nil
}

// Decide posts a decision on a call the process waits for, from from (an
// operator or the user), and plays the turns it causes; a call that waits
// for none is refused with inbox.ErrNotPending.
func (s *Session) Decide(ctx context.Context, from string, d conversation.ApprovalDecision) ([]Outcome, error) {
	_, _, err := s.inbox.Post(ctx, sessionPID, inbox.Approval(d, from))
	s.sync()
	if err != nil {
		return nil, fmt.Errorf("engines: session: %w", err)
	}
	return s.Run(ctx)
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

// Run plays turns while the process is READY and on the wake queue (it has
// messages in its inbox). It returns the outcomes of the turns it played.
func (s *Session) Run(ctx context.Context) ([]Outcome, error) {
	var outs []Outcome
	for {
		p, err := s.inbox.Get(sessionPID)
		if err != nil {
			return outs, fmt.Errorf("engines: session: %w", err)
		}
		if p.Status.State != lifecycle.Ready || !p.Queued {
			return outs, nil
		}
		out, err := s.play(ctx)
		if err != nil {
			return outs, err
		}
		outs = append(outs, out)
	}
}

// play plays one turn.
func (s *Session) play(ctx context.Context) (Outcome, error) {
	s.turns++
	id := "t" + strconv.Itoa(s.turns)
	s.turn = id
	defer func() { s.turn = "" }()
	// The claim: wake, and the drain of every pending message.
	msgs, err := s.inbox.Claim(ctx, sessionPID, "node:session")
	s.sync()
	if err != nil {
		return Outcome{}, fmt.Errorf("engines: session: %w", err)
	}
	history := s.Log
	start := conversation.NewTurnStart("wake")
	start.At, start.By = s.now(), "node:session"
	s.Log = append(s.Log, start)
	for _, m := range msgs {
		e := conversation.NewInboxMessage(m.ID, m.Kind, m.From, m.Content)
		e.At, e.By = m.At, m.Sender()
		s.Log = append(s.Log, e)
	}
	current := s.Log[len(history):]
	for i := range current {
		current[i].Turn = id
	}
	t := s.Turn
	t.ID, t.History, t.Current, t.Approvals = id, history, current, s.Approvals
	out, err := s.Engine.Run(ctx, &t, CheckpointFunc(func(_ context.Context, evs []conversation.Event) error {
		s.Log = append(s.Log, evs...)
		return nil
	}))
	if err != nil {
		return Outcome{}, err
	}
	s.Log = append(s.Log, out.Pending...)
	s.Approvals = out.Approvals
	if len(out.Approvals) > 0 {
		_, err = s.inbox.AwaitApproval(ctx, sessionPID, "engine", out.Approvals)
	} else {
		_, err = s.inbox.Fire(ctx, sessionPID, out.Next, "engine")
	}
	s.sync()
	if err != nil {
		return Outcome{}, fmt.Errorf("engines: session: %w", err)
	}
	return out, nil
}

// logChange logs a transition of the process as a state change: the wake
// and the end of a turn in the turn, an unblock (the wake rule's) in none,
// as the store logs them.
func (s *Session) logChange(tr lifecycle.Transition) {
	change := conversation.NewStateChange(string(tr.From), string(tr.To), string(tr.Event))
	change.At, change.By = tr.At, tr.By
	if tr.Event != lifecycle.UserInput {
		change.Turn = s.turn
	}
	s.Log = append(s.Log, change)
}

// sync copies the process's status from the inbox.
func (s *Session) sync() {
	if p, err := s.inbox.Get(sessionPID); err == nil {
		s.Status = p.Status
	}
}
