package main

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/tools"
)

func TestDemoModelScript(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse(demoModelScript)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 1 || s.Turns[0].Match != "" || len(s.Turns[0].Rounds) != 1 {
		t.Fatalf("want one unmatched turn of one round, got %+v", s.Turns)
	}
	calls := s.Turns[0].Rounds[0].Calls
	if len(calls) != 1 || calls[0].Name != tools.Respond {
		t.Fatalf("want one respond call, got %+v", calls)
	}
	if calls[0].Args["awaiting_user_input"] != true {
		t.Errorf("awaiting_user_input = %v, want true", calls[0].Args["awaiting_user_input"])
	}
	msg, _ := calls[0].Args["message"].(string)
	for _, want := range []string{"demo model", "No model provider is configured", "brain.yaml"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestDemoModelAnswers(t *testing.T) {
	t.Parallel()
	m, err := demoModel()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := llm.Collect(m.Generate(context.Background(), &llm.Request{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != tools.Respond {
		t.Errorf("the demo model answered %+v, want one respond call", resp)
	}
}
