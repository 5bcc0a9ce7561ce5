package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
)

// A template is an event Go prepares for a script, complete except for the
// values only the script knows. Those fields hold a placeholder, the string
// "\x00" + name, which encoding/json writes as "\u0000name"; the prelude's
// render replaces each such JSON string by the JSON of the value. No text
// of ours starts with a NUL, so a placeholder cannot be mistaken for data.
func placeholder(name string) string { return "\x00" + name }

// encodeEvent returns the JSON of e as the log stores it: no id (the stream
// entry id is the event id), time in UTC.
func encodeEvent(e conversation.Event) (string, error) {
	e.ID = ""
	e.At = e.At.UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("encode %s event: %w", e.Type, err)
	}
	return string(b), nil
}

// decodeEvent returns the event stored as data under stream id id.
func decodeEvent(id, data string) (conversation.Event, error) {
	var e conversation.Event
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return conversation.Event{}, fmt.Errorf("store: event %s: corrupt JSON: %w", id, err)
	}
	e.ID = id
	return e, nil
}

// encodeEvents validates and encodes the events a turn appends, stamping a
// missing time with now. Nothing is written when one is invalid.
func encodeEvents(events []conversation.Event, now time.Time) ([]any, error) {
	out := make([]any, 0, len(events))
	for i, e := range events {
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		if e.At.IsZero() {
			e.At = now
		}
		s, err := encodeEvent(e)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func stamped(e conversation.Event, at time.Time, turn, by string) conversation.Event {
	e.At, e.Turn, e.By = at, turn, by
	return e
}

// move is a transition of the lifecycle table that the scripts fire.
type move struct {
	from, to lifecycle.State
	event    lifecycle.Event
}

// fixedMove asks lifecycle where event leads from state, so that the
// events the scripts write always say what the lifecycle table says.
func fixedMove(from lifecycle.State, ev lifecycle.Event) (move, error) {
	tr, _, err := lifecycle.Fire(context.Background(), lifecycle.Status{State: from}, ev, "store", time.Unix(0, 1))
	if err != nil {
		return move{}, fmt.Errorf("store: lifecycle refuses %s from %s: %w", ev, from, err)
	}
	return move{from: tr.From, to: tr.To, event: tr.Event}, nil
}

// templates are the events the scripts write themselves, encoded once: all
// that varies between calls (the time, the turn, who, the states of a
// commit, an inbox message) is a placeholder the script renders. They are
// part of the scripts' source (scripts.go), so no call sends or encodes
// them.
type templates struct {
	// unblock is the user_input state change of the wake rule.
	unblock string
	// turnStart, wake and inbox start a turn (Claim); recover precedes the
	// wake of a recovered one.
	turnStart, wake, recover, inbox string
	// change is the state change that ends a turn (Commit).
	change string
}

// atPlaceholderTime stands for the time in a template while it is encoded;
// its JSON string is then replaced by the "at" placeholder. No event of
// ours happens a nanosecond after the year 1 began.
var atPlaceholderTime = time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)

// encodeTemplate encodes e with turn and by as given and its time as the
// placeholder "at".
func encodeTemplate(e conversation.Event, turn, by string) (string, error) {
	s, err := encodeEvent(stamped(e, atPlaceholderTime, turn, by))
	if err != nil {
		return "", err
	}
	stamp, _ := json.Marshal(atPlaceholderTime)
	at, _ := json.Marshal(placeholder("at"))
	if strings.Count(s, string(stamp)) != 1 {
		return "", fmt.Errorf("store: template %s: its time is not where expected", e.Type)
	}
	return strings.Replace(s, string(stamp), string(at), 1), nil
}

func newTemplates() (templates, error) {
	var t templates
	var errs []error
	state := func(from lifecycle.State, ev lifecycle.Event, turn, by string) string {
		m, err := fixedMove(from, ev)
		if err == nil {
			var s string
			s, err = encodeTemplate(conversation.NewStateChange(string(m.from), string(m.to), string(m.event)), turn, by)
			if err == nil {
				return s
			}
		}
		errs = append(errs, err)
		return ""
	}
	event := func(e conversation.Event, turn, by string) string {
		s, err := encodeTemplate(e, turn, by)
		errs = append(errs, err)
		return s
	}
	turn, by := placeholder("turn"), placeholder("by")
	t.unblock = state(lifecycle.Blocked, lifecycle.UserInput, "", by)
	t.turnStart = event(conversation.NewTurnStart("wake"), turn, by)
	t.wake = state(lifecycle.Ready, lifecycle.Wake, turn, by)
	t.recover = state(lifecycle.Running, lifecycle.Recover, turn, by)
	t.inbox = event(conversation.NewInboxMessage(placeholder("id"), conversation.Kind(placeholder("kind")),
		placeholder("from"), placeholder("content")), turn, by)
	t.change = event(conversation.NewStateChange(placeholder("from"), placeholder("to"), placeholder("event")), turn, by)
	return t, errors.Join(errs...)
}
