package vogon

import (
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/recipes"
)

// A phase's narrower pool keeps the approvals of the recipe's: a tool
// that waits for a person's decision still does in the phase that offers
// it.
func TestPhaseToolsKeepApprovals(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Engine: recipes.EngineVogon, Tools: []recipes.ToolRef{
		{Name: "lookup", Approval: &recipes.Approval{By: recipes.ApproverOperator, Timeout: recipes.Duration(time.Hour)}},
	}}
	reg := testRegistry(t, r)
	phase, err := phaseTools(reg, recipes.Phase{Name: "draft", Tools: []string{"lookup"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := phase.Approval("lookup")
	if !ok || a.Timeout != time.Hour {
		t.Errorf("the phase's lookup: approval %+v, %t; want the recipe's (an operator's, 1h)", a, ok)
	}
	if _, ok := phase.Approval(PhaseDone); ok {
		t.Errorf("phase_done waits for approval; want it to run at once")
	}
}

// A person's rejection of a phase_done (Rejected) is not a gate failure: a
// turn resumed after it still has the phase's correction budget.
func TestRejectionIsNoGateFailure(t *testing.T) {
	t.Parallel()
	refused := func(text string) conversation.Event {
		return conversation.NewToolCallResponse("c", PhaseDone, []conversation.Block{conversation.TextBlock(text)}, true)
	}
	turn := []conversation.Event{
		conversation.NewPhaseChange("", "draft", conversation.PhaseStart, nil),
		refused(Rejected + "operator:bo rejected the result."),
		refused(GateFailed + "missing property 'title'"),
	}
	if n := gateFailures(turn, 0); n != 1 {
		t.Errorf("gateFailures = %d, want 1: the gate's refusal, not the person's", n)
	}
}
