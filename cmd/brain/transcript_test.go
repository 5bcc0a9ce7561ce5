package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
)

// The answer's sources are listed under it; usage is one raw line.
func TestTranscriptSourcesAndUsage(t *testing.T) {
	t.Parallel()
	answer := conversation.NewToolCallResponse("c1", "respond", []conversation.Block{
		conversation.TextBlock("Brain runs agents.").For(conversation.RoleUser),
	}, false)
	answer.ToolCallResponse.Citations = []conversation.Citation{
		{Source: conversation.Source{URL: "https://a.test", Title: "A"}},
		{Source: conversation.Source{URL: "https://b.test"}, Incomplete: true},
	}
	var b strings.Builder
	writeTranscript(&b, []conversation.Event{answer})
	want := "assistant: Brain runs agents.\n  [1] A <https://a.test>\n  [2] https://b.test (answer cut off)\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}

	usage := conversation.NewModelUsage(conversation.ModelUsage{Model: "gpt-5", InputTokens: 1200, OutputTokens: 85})
	usage.By = "model"
	if got, want := rawLine(&usage), "model_usage model: gpt-5: 1200 tokens in, 85 out"; got != want {
		t.Errorf("raw line %q, want %q", got, want)
	}
	usage.ModelUsage.DroppedMessages, usage.ModelUsage.ClearedResults = 12, 3
	if got, want := rawLine(&usage), "model_usage model: gpt-5: 1200 tokens in, 85 out; conversation cut to fit: "+
		"12 earlier messages left out, 3 tool results cleared"; got != want {
		t.Errorf("raw line %q, want %q", got, want)
	}
}

// A model error shows in the user view as a short notice; the author's view
// keeps the operator's text.
func TestTranscriptShowsModelErrorNotice(t *testing.T) {
	t.Parallel()
	notice := conversation.NewSystemNotice("model_error", "The model call failed: openai: 500")
	var user, author strings.Builder
	writeTranscript(&user, []conversation.Event{notice})
	writeAuthorTranscript(&author, []conversation.Event{notice})
	if want := "[notice] Something went wrong while answering, so this turn ended without an answer. Please try again later.\n"; user.String() != want {
		t.Errorf("user view %q, want %q", user.String(), want)
	}
	if want := "[notice model_error] The model call failed: openai: 500\n"; author.String() != want {
		t.Errorf("author view %q, want %q", author.String(), want)
	}
}
