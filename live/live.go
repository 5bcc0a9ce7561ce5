// Package live is what a running turn shows while it runs: ephemeral
// progress (a round started, the model's text and the answer as they are
// written, a tool started and finished). Updates are never logged and never
// replayed; the durable event that lands later supersedes them. A turn
// publishes them to a Sink; a node carries them to the clients that watch
// the process, on whatever node they are connected to. A FieldReader reads
// the answer an ending tool carries from its arguments as they stream.
package live

import (
	"time"
)

// Kind says what an Update reports.
type Kind string

// Update kinds.
const (
	// RoundStarted: the turn's Round-th model call began.
	RoundStarted Kind = "round_started"
	// Text: the model wrote Delta, free text of this round (in a turn
	// that ends with a tool, the model thinking aloud; in turn_end:
	// natural, the answer itself).
	Text Kind = "text"
	// Answer: Delta was written of the answer the turn's ending tool
	// carries (respond's message, finish_task's result), read from the
	// tool call's arguments as they stream.
	Answer Kind = "answer"
	// ToolStarted and ToolFinished: a tool call of this round (Tool,
	// CallID) began, or ended (IsError when it failed).
	ToolStarted  Kind = "tool_started"
	ToolFinished Kind = "tool_finished"
)

// Update is one piece of progress of a running turn.
type Update struct {
	Process string    `json:"process"`
	Turn    string    `json:"turn"`
	Round   int       `json:"round"`
	Kind    Kind      `json:"kind"`
	At      time.Time `json:"at"`
	// Delta is the text added (Text, Answer); Offset is how many bytes of
	// this round's text, or answer, came before it, so that a client that
	// missed an update sees the gap.
	Delta  string `json:"delta,omitempty"`
	Offset int    `json:"offset,omitempty"`
	// Tool and CallID name the call of ToolStarted and ToolFinished.
	Tool    string `json:"tool,omitempty"`
	CallID  string `json:"call_id,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// User says the user view shows it: the answer being written, a round
	// starting; not tools, nor text addressed to the model itself.
	User bool `json:"user,omitempty"`
}

// Sink receives the updates of running turns. Publish must not block the
// turn: a sink that cannot keep up drops updates (they are ephemeral).
type Sink interface {
	Publish(Update)
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(Update)

// Publish calls f.
func (f SinkFunc) Publish(u Update) { f(u) }
