package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
)

// A template (see templates) is an event Go prepares for the scripts,
// complete except for the values that change between calls. Those fields
// hold a placeholder, the string
// "\x00" + name, which encoding/json writes as "\u0000name"; the prelude's
// render replaces each such JSON string by the JSON of the value. No text
// of ours starts with a NUL, so a placeholder cannot be mistaken for data.
func placeholder(name string) string { return "\x00" + name }

// encodeEvent returns the JSON of e as the log stores it: no id (the stream
// entry id is the event id), time in UTC.
func encodeEvent(e conversation.Event) (string, error) {
	e.ID = ""
	e.At = e.At.UTC()
	b, err := e.AppendJSON(make([]byte, 0, 512))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// decodeEvent returns the event stored as data under stream id id. An
// event a script wrote from a template is read by matching the template
// (templates.read), several times faster than decoding its JSON.
func (s *Store) decodeEvent(id, data string) (conversation.Event, error) {
	if e, ok := s.tpl.read(data); ok {
		e.ID = id
		return e, nil
	}
	return decodeEventJSON(id, data)
}

// decodeEventJSON returns the event stored as data under stream id id,
// decoding its JSON. It is most of a node's work when a claim reads a log
// back, so it uses segmentio's decoder: encoding/json's semantics, two to
// four times as fast on our events (BenchmarkDecodeEvent).
func decodeEventJSON(id, data string) (conversation.Event, error) {
	var e conversation.Event
	if err := segjson.Unmarshal([]byte(data), &e); err != nil {
		return conversation.Event{}, fmt.Errorf("store: event %s: corrupt JSON: %w", id, err)
	}
	e.ID = id
	return e, nil
}

// made returns the events a script wrote itself from templates at time at,
// from the rows it replied with (see write in the prelude).
func (s *Store) made(rows any, at time.Time) ([]conversation.Event, error) {
	list, _ := rows.([]any)
	out := make([]conversation.Event, 0, len(list))
	for _, row := range list {
		e, err := s.tpl.build(strs(row), at)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
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
// them; and a script that returns events it wrote from a template returns
// the values it rendered, from which build makes the event without
// decoding its JSON.
type templates struct {
	json  map[string]string   // by name: the TPL table of the scripts
	parts map[string][]string // by name: the JSON split at its placeholders (templateParts)
	moves map[string]move     // the state changes of the lifecycle table
}

// templateValues are the templates by name, with the values each takes
// besides its time ("at", which every template has):
//   - unblock: the user_input state change of the wake rule;
//   - turn_start, wake, inbox: a turn's start (Claim); recover precedes the
//     wake of a recovered turn;
//   - steer: an inbox message drained between two rounds of a running
//     turn (Steer);
//   - change: the state change that ends a turn (Commit).
var templateValues = map[string][]string{
	"unblock":    {"by"},
	"turn_start": {"turn", "by"},
	"wake":       {"turn", "by"},
	"recover":    {"turn", "by"},
	"inbox":      {"turn", "by", "id", "kind", "from", "content"},
	"steer":      {"turn", "by", "id", "kind", "from", "content"},
	"change":     {"turn", "by", "from", "to", "event"},
}

func newTemplates() (templates, error) {
	t := templates{json: make(map[string]string), parts: make(map[string][]string), moves: make(map[string]move)}
	var errs []error
	for name, ask := range map[string]struct {
		from lifecycle.State
		ev   lifecycle.Event
	}{"unblock": {lifecycle.Blocked, lifecycle.UserInput}, "wake": {lifecycle.Ready, lifecycle.Wake}, "recover": {lifecycle.Running, lifecycle.Recover}} {
		m, err := fixedMove(ask.from, ask.ev)
		t.moves[name] = m
		errs = append(errs, err)
	}
	for name, keys := range templateValues {
		e := t.event(name, func(k string) string {
			if slices.Contains(keys, k) {
				return placeholder(k)
			}
			return ""
		})
		s, err := encodeTemplate(e)
		t.json[name], t.parts[name] = s, templateParts(s)
		errs = append(errs, err)
	}
	return t, errors.Join(errs...)
}

// event returns the event of template name with the values v gives, at no
// time: placeholders when encoding the template, a script's values when
// building what it wrote.
func (t templates) event(name string, v func(string) string) conversation.Event {
	var e conversation.Event
	switch name {
	case "turn_start":
		e = conversation.NewTurnStart("wake")
	case "inbox", "steer":
		e = conversation.NewInboxMessage(v("id"), conversation.Kind(v("kind")), v("from"), v("content"))
		e.InboxMessage.DuringTurn = name == "steer"
	case "change":
		e = conversation.NewStateChange(v("from"), v("to"), v("event"))
	default: // unblock, wake, recover
		m := t.moves[name]
		e = conversation.NewStateChange(string(m.from), string(m.to), string(m.event))
	}
	e.Turn, e.By = v("turn"), v("by")
	return e
}

// build returns the event a script wrote from a template at time at, from
// what it returned: the event's stream id, the template's name, then its
// values in the order of templateValues.
func (t templates) build(made []string, at time.Time) (conversation.Event, error) {
	if len(made) < 2 || t.json[made[1]] == "" || len(made) != 2+len(templateValues[made[1]]) {
		return conversation.Event{}, fmt.Errorf("store: a script's reply says it wrote %q from a template", made)
	}
	id, names, vals := made[0], templateValues[made[1]], made[2:]
	e := t.event(made[1], func(k string) string {
		if i := slices.Index(names, k); i >= 0 {
			return vals[i]
		}
		return "" // a value the template does not take (unblock's turn)
	})
	e.ID, e.At = id, at.UTC() // as the JSON would say
	return e, nil
}

// read returns the event whose JSON is data when a template wrote it: its
// literal parts are all there, in order, and each placeholder is a JSON
// string (every value a script renders is one). ok is false otherwise, and
// the caller decodes the JSON.
func (t templates) read(data string) (e conversation.Event, ok bool) {
	var buf [8]string // a template's values; none has more
	for name, parts := range t.parts {
		vals, ok := match(parts, data, buf[:0])
		if !ok {
			continue
		}
		value := func(k string) string {
			for i := 1; i+1 < len(parts); i += 2 {
				if parts[i] == k {
					return vals[i/2]
				}
			}
			return ""
		}
		at, err := time.Parse(time.RFC3339Nano, value("at"))
		if err != nil {
			return conversation.Event{}, false
		}
		e = t.event(name, value)
		e.At = at
		return e, true
	}
	return conversation.Event{}, false
}

// match appends to vals the values of the placeholders of a template split
// into parts (templateParts), in their order, when data is that template
// filled in.
func match(parts []string, data string, vals []string) ([]string, bool) {
	if !strings.HasPrefix(data, parts[0]) {
		return nil, false
	}
	rest := data[len(parts[0]):]
	for i := 1; i+1 < len(parts); i += 2 {
		val, n, valid := jsonString(rest)
		if !valid || !strings.HasPrefix(rest[n:], parts[i+1]) {
			return nil, false
		}
		vals = append(vals, val)
		rest = rest[n+len(parts[i+1]):]
	}
	return vals, rest == ""
}

// jsonString reads the JSON string at the start of s: its value and the
// length of its JSON. valid is false when s does not start with one.
func jsonString(s string) (val string, n int, valid bool) {
	if s == "" || s[0] != '"' {
		return "", 0, false
	}
	escaped := false
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			escaped = true
			i++ // the escaped character
		case '"':
			if !escaped {
				return s[1:i], i + 1, utf8.ValidString(s[1:i]) && !hasControl(s[1:i])
			}
			err := json.Unmarshal([]byte(s[:i+1]), &val)
			return val, i + 1, err == nil
		}
	}
	return "", 0, false
}

// hasControl reports whether s holds a control character, which a JSON
// string must escape.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 })
}

// atPlaceholderTime stands for the time in a template while it is encoded;
// its JSON string is then replaced by the "at" placeholder. No event of
// ours happens a nanosecond after the year 1 began.
var atPlaceholderTime = time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)

// encodeTemplate encodes e with its time as the placeholder "at".
func encodeTemplate(e conversation.Event) (string, error) {
	e.At = atPlaceholderTime
	s, err := encodeEvent(e)
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
