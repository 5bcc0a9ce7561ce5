package vogon

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// PhaseDone is the tool that ends a phase.
const PhaseDone = "phase_done"

// Texts of the phase_done protocol, for the engine and tests.
const (
	// NotAloneError is the error result of a phase_done call that came
	// with other calls: they run, and the phase ends once they are seen.
	NotAloneError = "phase_done must be the LAST and ONLY tool call in a response"
	// Ack is the result of a phase_done call whose result passed the gate.
	Ack = "Phase done; its result passed the gate."
	// ResultMissing: a phase_done call without a result.
	ResultMissing = `phase_done needs "result": put the complete result of this phase in it`
	// GateFailed begins the error result of a result the gate refused.
	GateFailed = "phase_done refused: the result does not match the phase's gate schema: "
	// Rejected begins the error result of a phase_done call whose result a
	// person rejected (a phase's approval); the reason and what to do
	// follow. It is not a gate failure: it spends no correction.
	Rejected = "phase_done was not approved: "
	// DefaultCorrection is the no_tool_call correction of a vogon turn.
	DefaultCorrection = "VALIDATION CHECK: your previous response had no tool call. Every response must call at least one tool. " +
		"If work remains, call the tool that does it now. If this phase is done, call `phase_done` now, alone, with its result."
)

const description = "End the current phase and hand its result to the next phase. Call it once the phase's work is done, " +
	"as the LAST and ONLY tool call of its response. 'result' must match the phase's gate schema (the system prompt shows it); " +
	"a result that does not is refused with the reason, for you to correct."

// doneTool is phase_done's definition; the engine acts on its calls, the
// registry only checks their shape.
type doneTool struct{}

func (doneTool) Definition() tools.Definition {
	return tools.Definition{
		Name:        PhaseDone,
		Description: description,
		Schema: json.RawMessage(`{"type":"object","properties":{"result":{"description":"The phase's result, matching its gate schema."}},` +
			`"required":["result"],"additionalProperties":false}`),
		Replayable: true,
	}
}

func (doneTool) Call(context.Context, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, errors.New(NotAloneError)
}

// parseDone returns the result of a phase_done call.
func parseDone(args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	if len(a.Result) == 0 || string(a.Result) == "null" {
		return nil, errors.New(ResultMissing)
	}
	return a.Result, nil
}

// phaseTools is the registry of phase p: the tools of the pool reg that
// it names, respond when chat is set and the pool has it (a chat-like
// vogon talks with its user in every phase), and phase_done.
func phaseTools(reg *tools.Registry, p recipes.Phase, chat bool) (*tools.Registry, error) {
	var ts []tools.Tool
	for _, d := range reg.Definitions() {
		if d.Name == tools.Respond && chat {
			ts = append(ts, reg.Offer(d))
			continue
		}
		if d.Name == tools.Respond || d.Name == tools.FinishTask || d.Name == PhaseDone {
			continue
		}
		for _, name := range p.Tools {
			if name == d.Name || (strings.HasSuffix(name, ".*") && strings.HasPrefix(d.Name, strings.TrimSuffix(name, "*"))) {
				ts = append(ts, reg.Offer(d))
				break
			}
		}
	}
	return tools.NewRegistry(append(ts, doneTool{})...) // a gated tool stays gated in the phase (Offer)
}
