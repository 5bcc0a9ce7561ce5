package vogon

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/recipes"
)

// state is where a process's pipeline stands, read from its log.
type state struct {
	// phase is the index of the current phase; -1: no phase runs (the
	// pipeline has not started, or its last phase ended).
	phase int
	// results are the results of the phases that passed their gates, by
	// name: the newest of each.
	results map[string]json.RawMessage
	// since is the index in the turn's events of the newest phase change
	// (-1 when it is in the history): the current phase's events follow it.
	since int
	// back, when the current phase began through on_fail's back_to, is
	// the phase that sent the pipeline back and why.
	back *sentBack
}

// sentBack is a phase whose results kept failing its gate, so that on_fail
// sent the pipeline back to an earlier phase: its name, and the error
// results of its phase_done calls, oldest first.
type sentBack struct {
	from   string
	errors []string
}

// read finds the pipeline's state in the history and the turn's events.
func read(phases []recipes.Phase, history, turn []conversation.Event) state {
	s := state{phase: -1, results: map[string]json.RawMessage{}, since: -1}
	var refused []string // the phase_done error results since the newest phase change
	apply := func(e *conversation.Event) bool {
		if r := e.ToolCallResponse; r != nil && r.Name == PhaseDone && r.IsError {
			refused = append(refused, conversation.TextOf(r.Content))
		}
		pc := e.PhaseChange
		if pc == nil {
			return false
		}
		if pc.Reason == conversation.PhaseDone && pc.From != "" {
			s.results[pc.From] = pc.Result
		}
		s.back = nil
		if pc.Reason == conversation.PhaseBackTo {
			s.back = &sentBack{from: pc.From, errors: refused}
		}
		refused = nil
		s.phase = slices.IndexFunc(phases, func(p recipes.Phase) bool { return p.Name == pc.To })
		return true
	}
	for i := range history {
		apply(&history[i])
	}
	for i := range turn {
		if apply(&turn[i]) {
			s.since = i
		}
	}
	return s
}

// gateFailures counts the phase_done calls of the current phase that the
// gate refused, in the turn's events after since; a person's rejection
// (Rejected) is not the gate's and does not count.
func gateFailures(turn []conversation.Event, since int) int {
	n := 0
	for _, e := range turn[since+1:] {
		if r := e.ToolCallResponse; r != nil && r.Name == PhaseDone && r.IsError && !strings.HasPrefix(conversation.TextOf(r.Content), Rejected) {
			n++
		}
	}
	return n
}
