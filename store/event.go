package store

import (
	"context"
	"encoding/json"
	"fmt"
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

// fixedMoves are the transitions whose events Go prepares for the scripts:
// user_input (the wake rule), wake and recover (Claim). Their states are
// asked of lifecycle once, by New, so that the events always say what the
// lifecycle table says.
type fixedMoves struct {
	unblock, wake, recover move
}

func newFixedMoves() (fixedMoves, error) {
	ask := func(from lifecycle.State, ev lifecycle.Event) (move, error) {
		tr, _, err := lifecycle.Fire(context.Background(), lifecycle.Status{State: from}, ev, "store", time.Unix(0, 1))
		if err != nil {
			return move{}, fmt.Errorf("store: lifecycle refuses %s from %s: %w", ev, from, err)
		}
		return move{from: tr.From, to: tr.To, event: tr.Event}, nil
	}
	var m fixedMoves
	var err error
	if m.unblock, err = ask(lifecycle.Blocked, lifecycle.UserInput); err != nil {
		return m, err
	}
	if m.wake, err = ask(lifecycle.Ready, lifecycle.Wake); err != nil {
		return m, err
	}
	m.recover, err = ask(lifecycle.Running, lifecycle.Recover)
	return m, err
}

// stateChange returns the state_change event of m, stamped.
func (m move) stateChange(at time.Time, turn, by string) (string, error) {
	return encodeEvent(stamped(conversation.NewStateChange(string(m.from), string(m.to), string(m.event)), at, turn, by))
}
