package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/tools"
)

// statusWidth bounds the status line on a terminal, in runes, so that it
// never wraps (a wrapped line cannot be rewritten with a carriage return).
const statusWidth = 79

// Terminal control: back to the start of the line, and erase to its end.
const (
	carriageReturn = "\r"
	eraseLine      = "\x1b[K"
)

// progressView shows `brain logs -f` the progress of the process's running
// turn: the round, the tools that run, the answer as it is written. On a
// terminal it is one status line, rewritten in place and taken away while
// a durable event is printed; elsewhere it is a compact line at each step
// (a round starts, a tool starts or ends, the answer begins), never one per
// piece of text. The durable event that ends the turn supersedes its
// progress: the status goes, and what comes later of that turn is ignored.
// A nil *progressView shows nothing.
type progressView struct {
	w   io.Writer
	tty bool

	turn    string          // the turn shown; "" when none runs
	round   int             // its round
	running []live.Update   // its tools that run, in the order they started
	text    []byte          // the round's free text so far
	answer  []byte          // the round's answer so far
	ended   map[string]bool // turns whose end has landed
	shown   string          // what the status line shows on the terminal
}

func newProgressView(w io.Writer, tty bool) *progressView {
	return &progressView{w: w, tty: tty, ended: make(map[string]bool)}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// update shows one progress update.
func (p *progressView) update(u live.Update) {
	if p == nil || p.ended[u.Turn] {
		return
	}
	if u.Turn != p.turn || u.Round > p.round {
		// A round's tools end within it: those whose end was missed too.
		p.turn, p.round, p.running, p.text, p.answer = u.Turn, u.Round, nil, nil, nil
		p.step("round %d", u.Round)
	}
	switch u.Kind {
	case live.RoundStarted:
		// Shown above, as any first sight of a round.
	case live.Text:
		if p.grow(&p.text, u) && len(p.answer) == 0 {
			p.step("round %d · writing", p.round)
		}
	case live.Answer:
		if p.grow(&p.answer, u) {
			p.step("round %d · answering", p.round)
		}
	case live.ToolStarted:
		p.running = append(p.running, u)
		p.step("round %d · %s running", p.round, u.Tool)
	case live.ToolFinished:
		p.running = slices.DeleteFunc(p.running, func(r live.Update) bool { return r.CallID == u.CallID })
		outcome := "done"
		if u.IsError {
			outcome = "failed"
		}
		p.step("round %d · %s %s", p.round, u.Tool, outcome)
	}
	p.draw()
}

// grow adds u's delta to text when it starts where text ends (a delta
// after a gap is dropped: what arrived stays shown; one at offset 0 starts
// the text again, the model's call asked again) and reports whether it was
// the first of the round.
func (p *progressView) grow(text *[]byte, u live.Update) (first bool) {
	if u.Delta == "" {
		return false
	}
	if u.Offset == 0 {
		*text = (*text)[:0]
	}
	if u.Offset != len(*text) {
		return false
	}
	first = len(*text) == 0
	*text = append(*text, u.Delta...)
	return first
}

// step prints a line of progress where there is no terminal: the status
// line shows the same on a terminal.
func (p *progressView) step(format string, args ...any) {
	if !p.tty {
		fmt.Fprintf(p.w, "… "+format+"\n", args...)
	}
}

// status is the status line: the round, the tools that run, the tail of
// the answer (or of the model's text) being written.
func (p *progressView) status() string {
	if p.turn == "" {
		return ""
	}
	parts := []string{fmt.Sprintf("… round %d", p.round)}
	for _, r := range p.running {
		parts = append(parts, r.Tool+" running")
	}
	line := strings.Join(parts, " · ")
	label, text := "answering", p.answer
	if len(text) == 0 {
		label, text = "writing", p.text
	}
	if len(text) == 0 {
		return clipRunes(line, statusWidth)
	}
	line += " · " + label + ": "
	room := statusWidth - len([]rune(line))
	if room < 2 {
		return clipRunes(line, statusWidth)
	}
	tail := []rune(strings.Join(strings.Fields(string(text)), " "))
	if len(tail) > room {
		tail = append([]rune("…"), tail[len(tail)-room+1:]...)
	}
	return line + string(tail)
}

// clipRunes shortens s to n runes, the last an ellipsis.
func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// draw rewrites the status line on a terminal.
func (p *progressView) draw() {
	if !p.tty {
		return
	}
	if s := p.status(); s != p.shown {
		fmt.Fprint(p.w, carriageReturn+s+eraseLine)
		p.shown = s
	}
}

// hide takes the status line away, so that what is printed next starts on
// a clean line.
func (p *progressView) hide() {
	if p == nil || p.shown == "" {
		return
	}
	fmt.Fprint(p.w, carriageReturn+eraseLine)
	p.shown = ""
}

// landed prints a durable event with print, the status line taken away
// meanwhile, and lets it supersede what it supersedes of the progress (see
// supersedes). print returns the process's state read after the event came
// ("" when unknown): a state other than RUNNING, read after the progress
// came, says that the turn that sent it is over. The status line comes back
// if the turn still runs.
func (p *progressView) landed(e *conversation.Event, print func() (state string)) {
	if p == nil {
		print()
		return
	}
	p.hide()
	state := print()
	turn := cmp.Or(e.Turn, p.turn)
	switch supersedes(e) {
	case supersedesTurn:
		p.end(turn)
	case supersedesText:
		if turn == p.turn {
			p.text, p.answer = nil, nil
		}
	}
	if e.TurnStart != nil && e.Turn != p.turn {
		p.end(p.turn) // a turn starts: the one shown is over
	}
	if state != "" && state != string(lifecycle.Running) {
		p.end(p.turn)
	}
	p.draw()
}

// end marks turn over: its later progress is ignored.
func (p *progressView) end(turn string) {
	if turn == "" {
		return
	}
	p.ended[turn] = true
	if turn == p.turn {
		p.turn, p.round, p.running, p.text, p.answer = "", 0, nil, nil, nil
	}
}

// supersession is what a durable event supersedes of the progress of its
// turn (the event's Turn).
type supersession int

const (
	supersedesNothing supersession = iota
	// supersedesText: a message of the model's to the user landed; the text
	// written so far is in it. The turn may go on (free text beside tool
	// calls, in turn_end: natural).
	supersedesText
	// supersedesTurn: the turn's answer landed (respond's message,
	// finish_task's result), or the turn ended (a state change out of
	// RUNNING); what comes later of that turn is stale.
	supersedesTurn
)

// supersedes says what e supersedes of its turn's progress. The console
// (web/static/app.js, supersedes) reads the log by the same rule.
func supersedes(e *conversation.Event) supersession {
	switch {
	case e.StateChange != nil && e.StateChange.From == string(lifecycle.Running):
		return supersedesTurn
	case e.ToolCallResponse != nil:
		if r := e.ToolCallResponse; !r.IsError && (r.Name == tools.Respond || r.Name == tools.FinishTask) {
			return supersedesTurn
		}
	case e.ChatResponse != nil:
		if c := e.ChatResponse; (c.Variant == conversation.VariantMessage || c.Variant == conversation.VariantStructured) &&
			c.AddressedTo(conversation.RoleUser) {
			return supersedesText
		}
	}
	return supersedesNothing
}
