package inbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
)

// The message Report makes reads back, from the inbox message event,
// as the report it was.
func TestReport(t *testing.T) {
	t.Parallel()
	r := conversation.ProcessEvent{Child: "p_kid", Recipe: "marvin-worker", Status: "done", Result: "three rows",
		Sources: []conversation.Source{{URL: "https://example.org/rows", Title: "Rows"}}}
	m := Report(r)
	if m.Kind != conversation.KindProcessEvent || m.From != "process:p_kid" {
		t.Errorf("report message of kind %s from %s; want a process_event from process:p_kid", m.Kind, m.From)
	}
	got, ok := conversation.NewInboxMessage("1", m.Kind, m.From, m.Content).InboxMessage.ProcessEvent()
	if !ok {
		t.Fatalf("the report's message does not read back as a process event: %q", m.Content)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("report read back (-sent +got):\n%s", diff)
	}
}
