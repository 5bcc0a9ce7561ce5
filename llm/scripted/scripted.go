// Package scripted is a deterministic llm.Model that plays a YAML script. It
// drives tests, `brain recipe test` and demos, with no network.
//
// A script is a list of turns, each a list of rounds (one model answer per
// round):
//
//	pace: 40ms                    # optional: the wait between parts of an answer
//	turns:
//	  - rounds:
//	      - calls:
//	          - name: http_fetch
//	            args: {url: "https://example.com"}
//	      - calls:
//	          - name: respond
//	            args: {message: "Here it is.", awaiting_user_input: true}
//	  - match: "weather"          # chosen when the last inbox message contains it
//	    rounds:
//	      - text: "It is sunny."
//	  - system: "You are the skeptic" # only for requests whose system prompt contains it
//	    rounds:
//	      - text: "I doubt it."
//
// Which answer a request gets depends on the request alone, so one script can
// serve many processes and a replayed round gets the same answer: among the
// turns whose system (when set) occurs in the request's system prompt, the
// turn is the first whose match occurs in the last user message, otherwise the
// n-th turn without a match, where n counts the runs of user messages in the
// request (each run starts a turn); past the last such turn the last one is
// played again. The round is the number of model answers after the last
// user message: its assistant messages, plus its system messages that follow
// no assistant message (a correction after an empty answer, which leaves no
// assistant message behind).
//
// An answer streams as a real model's does: its text in deltas and each
// call's arguments in fragments (llm.PartToolArgs) before the call, cut
// every few bytes; with a pace, the model waits that long between parts,
// as one writing slowly.
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/ctxtime"
	"github.com/engine-brain/brain/llm"
)

// Script is what a scripted model plays.
type Script struct {
	Turns []Turn `yaml:"turns"`
	// Pace, when set, is the wait between two parts of an answer: a model
	// that writes slowly, for demos and tests of what a running turn shows.
	Pace time.Duration `yaml:"pace,omitempty"`
}

// Turn is the answers of one turn, one per round.
type Turn struct {
	// Match, when set, picks this turn for a last user message containing it.
	Match string `yaml:"match,omitempty"`
	// System, when set, makes this turn only for requests whose system
	// prompt contains it (the heads of a zaphod turn, asked the same
	// conversation under prompts of their own).
	System string  `yaml:"system,omitempty"`
	Rounds []Round `yaml:"rounds"`
}

// Round is one model answer. An empty round is an empty answer.
type Round struct {
	Text      string `yaml:"text,omitempty"`
	Reasoning string `yaml:"reasoning,omitempty"`
	Calls     []Call `yaml:"calls,omitempty"`
	// Error makes the model call fail with this message.
	Error string `yaml:"error,omitempty"`
}

// Call is one tool call of an answer.
type Call struct {
	ID   string `yaml:"id,omitempty"`
	Name string `yaml:"name"`
	// Args are the arguments as YAML, sent as JSON.
	Args map[string]any `yaml:"args,omitempty"`
	// RawArgs, when set, are sent verbatim instead (to play broken JSON).
	RawArgs string `yaml:"raw_args,omitempty"`
}

// Parse reads a script. Unknown fields are errors.
func Parse(data []byte) (*Script, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate reports a script with nothing to play, a call without a name or
// a negative pace.
func (s *Script) Validate() error {
	if len(s.Turns) == 0 {
		return errors.New("scripted: the script has no turns; add `turns: [{rounds: [...]}]`")
	}
	if s.Pace < 0 {
		return fmt.Errorf("scripted: pace must not be negative (got %s)", s.Pace)
	}
	for i, t := range s.Turns {
		if len(t.Rounds) == 0 {
			return fmt.Errorf("scripted: turns[%d] has no rounds", i)
		}
		for j, r := range t.Rounds {
			for k, c := range r.Calls {
				if c.Name == "" {
					return fmt.Errorf("scripted: turns[%d].rounds[%d].calls[%d]: name is required", i, j, k)
				}
			}
		}
	}
	return nil
}

// LoadFile reads a script file.
func LoadFile(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Model plays a Script and records every request it was asked.
type Model struct {
	script   *Script
	noRecord bool

	mu       sync.Mutex
	requests []llm.Request
}

var _ llm.Model = (*Model)(nil)

// New returns a model playing s.
func New(s *Script) *Model { return &Model{script: s} }

// WithoutRecording returns a model playing the same script that keeps no
// record of its requests, for benchmarks and long demos.
func (m *Model) WithoutRecording() *Model { return &Model{script: m.script, noRecord: true} }

// Requests returns the requests the model was asked, in order.
func (m *Model) Requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.requests...)
}

// Unplayed names the rounds of the script no recorded request reached, as
// "turns[i].rounds[j]", in script order: a script that says more than its
// play asked for. A model built by WithoutRecording reports none.
func (m *Model) Unplayed() []string {
	if m.noRecord {
		return nil
	}
	played := map[[2]int]bool{}
	for _, req := range m.Requests() {
		if turn, round, err := m.position(req.System, req.Messages); err == nil {
			played[[2]int{turn, round}] = true
		}
	}
	var out []string
	for i, t := range m.script.Turns {
		for j := range t.Rounds {
			if !played[[2]int{i, j}] {
				out = append(out, fmt.Sprintf("turns[%d].rounds[%d]", i, j))
			}
		}
	}
	return out
}

// Generate plays the round that req is at.
func (m *Model) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	if !m.noRecord {
		m.mu.Lock()
		m.requests = append(m.requests, *req)
		m.mu.Unlock()
	}
	return func(yield func(llm.Part, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Part{}, err)
			return
		}
		turnIdx, round, err := m.position(req.System, req.Messages)
		if err != nil {
			yield(llm.Part{}, err)
			return
		}
		r := m.script.Turns[turnIdx].Rounds[round]
		if r.Error != "" {
			yield(llm.Part{}, fmt.Errorf("scripted: %s", r.Error))
			return
		}
		for i, p := range parts(r, turnIdx, round) {
			if i > 0 && m.script.Pace > 0 {
				if err := ctxtime.Sleep(ctx, m.script.Pace); err != nil {
					yield(llm.Part{}, err)
					return
				}
			}
			if !yield(p, nil) {
				return
			}
		}
	}
}

// position finds the turn and round a request is at.
func (m *Model) position(system string, msgs []conversation.Message) (turn, round int, err error) {
	runs, lastUser := 0, -1
	for i, msg := range msgs {
		if msg.Role != conversation.MessageUser {
			continue
		}
		if i == 0 || msgs[i-1].Role != conversation.MessageUser {
			runs++
		}
		lastUser = i
	}
	var lastText string
	if lastUser >= 0 {
		lastText = msgs[lastUser].Text()
	}
	for i := lastUser + 1; i < len(msgs); i++ {
		switch msgs[i].Role {
		case conversation.MessageAssistant:
			round++
		case conversation.MessageSystem:
			if i == 0 || msgs[i-1].Role != conversation.MessageAssistant {
				round++
			}
		}
	}

	turn = -1
	var unmatched []int
	for i, t := range m.script.Turns {
		if t.System != "" && !strings.Contains(system, t.System) {
			continue
		}
		if t.Match == "" {
			unmatched = append(unmatched, i)
		} else if turn < 0 && strings.Contains(lastText, t.Match) {
			turn = i
		}
	}
	if turn < 0 {
		if len(unmatched) == 0 {
			return 0, 0, fmt.Errorf("scripted: no turn matches the last message %q", lastText)
		}
		turn = unmatched[min(max(runs-1, 0), len(unmatched)-1)]
	}
	if n := len(m.script.Turns[turn].Rounds); round >= n {
		return 0, 0, fmt.Errorf("scripted: turns[%d] has %d rounds but round %d was asked for", turn, n, round+1)
	}
	return turn, round, nil
}

// parts is the answer of round r, streamed: reasoning whole, as providers
// send it, then the text in pieces, then each call, its arguments in pieces
// first.
func parts(r Round, turn, round int) []llm.Part {
	var out []llm.Part
	if r.Reasoning != "" {
		out = append(out, llm.Part{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{Text: r.Reasoning}})
	}
	for _, p := range pieces(r.Text) {
		out = append(out, llm.Part{Kind: llm.PartText, Text: p})
	}
	for i, c := range r.Calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d_%d", turn+1, round+1, i+1)
		}
		args := c.arguments()
		for _, p := range pieces(string(args)) {
			out = append(out, llm.Part{Kind: llm.PartToolArgs, ToolCall: &conversation.ToolCall{
				ID: id, Name: c.Name, Arguments: json.RawMessage(p),
			}})
		}
		out = append(out, llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{
			ID: id, Name: c.Name, Arguments: args,
		}})
	}
	finish := llm.FinishStop
	if len(r.Calls) > 0 {
		finish = llm.FinishToolCalls
	}
	// No usage: a script costs no tokens, and counting its text would put
	// made-up figures in metrics and logs.
	return append(out, llm.Part{Kind: llm.PartFinish, Finish: finish})
}

// pieceSize is the most bytes of a text delta or an argument fragment.
const pieceSize = 16

// pieces cuts s into pieces of at most pieceSize bytes, each cut at the
// start of a character.
func pieces(s string) []string {
	var out []string
	for len(s) > pieceSize {
		n := pieceSize
		for n > 1 && !utf8.RuneStart(s[n]) {
			n--
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func (c Call) arguments() json.RawMessage {
	if c.RawArgs != "" {
		return json.RawMessage(c.RawArgs)
	}
	if len(c.Args) == 0 {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(c.Args)
	if err != nil {
		// YAML maps with non-string keys cannot be JSON; play them as text so
		// the engine reports invalid arguments rather than the script crashing.
		return json.RawMessage(fmt.Sprintf("%q", fmt.Sprint(c.Args)))
	}
	return b
}
