package vogon

import (
	"encoding/json"
	"slices"

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
}

// read finds the pipeline's state in the history and the turn's events.
func read(phases []recipes.Phase, history, turn []conversation.Event) state {
	s := state{phase: -1, results: map[string]json.RawMessage{}, since: -1}
	apply := func(pc *conversation.PhaseChange) {
		if pc.Reason == conversation.PhaseDone && pc.From != "" {
			s.results[pc.From] = pc.Result
		}
		s.phase = slices.IndexFunc(phases, func(p recipes.Phase) bool { return p.Name == pc.To })
	}
	for i := range history {
		if pc := history[i].PhaseChange; pc != nil {
			apply(pc)
		}
	}
	for i := range turn {
		if pc := turn[i].PhaseChange; pc != nil {
			apply(pc)
			s.since = i
		}
	}
	return s
}

// gateFailures counts the phase_done calls of the current phase that the
// gate refused, in the turn's events after since.
func gateFailures(turn []conversation.Event, since int) int {
	n := 0
	for _, e := range turn[since+1:] {
		if r := e.ToolCallResponse; r != nil && r.Name == PhaseDone && r.IsError {
			n++
		}
	}
	return n
}
