package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/tools"
)

// What can go wrong in a play of `brain recipe test`: each fails the test
// unless the script lists it under `expect:`.
const (
	// expectUnknownTool: the model called a tool the recipe does not have
	// (a mistyped name, a tool left out of the recipe's tools).
	expectUnknownTool = "unknown_tool"
	// expectModelError: a model call failed (a scripted error, or a round
	// the script does not have).
	expectModelError = "model_error"
	// expectUnusedRounds: the play ended with rounds of the script no
	// model call reached.
	expectUnusedRounds = "unused_rounds"
)

var expectations = []string{expectUnknownTool, expectModelError, expectUnusedRounds}

// modelErrorCodes are the system notices of a failed model call.
var modelErrorCodes = []string{rounds.NoticeModelError, rounds.NoticeModelAuth, rounds.NoticeModelPayload}

// playProblem is one thing that went wrong in a play.
type playProblem struct {
	kind string // one of expectations
	text string
}

// validateExpect reports an unknown entry of a script's expect list.
func validateExpect(expect []string) error {
	for i, e := range expect {
		if !slices.Contains(expectations, e) {
			return fmt.Errorf("expect[%d]: unknown expectation %q; want one of %s", i, e, strings.Join(expectations, ", "))
		}
	}
	return nil
}

// playProblems finds what went wrong in a play's log: calls of tools that
// neither reg, the recipe's, has nor the engine adds itself (its ending
// tool, as vogon's phase_done), and failed model calls, in log
// order, then the script's unplayed rounds.
func playProblems(log []conversation.Event, reg *tools.Registry, ending string, unplayed []string) []playProblem {
	var out []playProblem
	unknown := map[string]bool{} // call ids of unknown tools
	for i := range log {
		e := &log[i]
		switch {
		case e.ToolCallRequest != nil && !reg.Has(e.ToolCallRequest.Name) && e.ToolCallRequest.Name != ending:
			unknown[e.ToolCallRequest.CallID] = true
		case e.ToolCallResponse != nil && e.ToolCallResponse.IsError && unknown[e.ToolCallResponse.CallID]:
			out = append(out, playProblem{expectUnknownTool, fmt.Sprintf("turn %s: %s",
				e.Turn, clip(conversation.TextOf(e.ToolCallResponse.Content)))})
		case e.SystemNotice != nil && slices.Contains(modelErrorCodes, e.SystemNotice.Code):
			out = append(out, playProblem{expectModelError, fmt.Sprintf("turn %s: %s: %s",
				e.Turn, e.SystemNotice.Code, clip(e.SystemNotice.Text))})
		}
	}
	if len(unplayed) > 0 {
		out = append(out, playProblem{expectUnusedRounds, "the play never reached " + strings.Join(unplayed, ", ") +
			" of the script: remove them, or add the messages that reach them"})
	}
	return out
}

// unexpected returns the problems whose kind expect does not list, and the
// kinds expect lists that did not happen.
func unexpected(problems []playProblem, expect []string) (bad []playProblem, missing []string) {
	seen := map[string]bool{}
	for _, p := range problems {
		seen[p.kind] = true
		if !slices.Contains(expect, p.kind) {
			bad = append(bad, p)
		}
	}
	for _, e := range expect {
		if !seen[e] {
			missing = append(missing, e)
		}
	}
	return bad, missing
}
