package llm

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
)

func stream(parts []Part, err error) func(func(Part, error) bool) {
	return func(yield func(Part, error) bool) {
		for _, p := range parts {
			if !yield(p, nil) {
				return
			}
		}
		if err != nil {
			yield(Part{}, err)
		}
	}
}

func TestCollect(t *testing.T) {
	t.Parallel()
	call := conversation.ToolCall{ID: "c1", Name: "respond", Arguments: []byte(`{}`)}
	search := conversation.HostedActivity{ActivityID: "ws1", Name: "web_search", State: conversation.ActivityCompleted}
	cite := conversation.Citation{Source: conversation.Source{URL: "https://a.test"}, Range: &conversation.Range{Start: 0, End: 5}}
	parts := []Part{
		{Kind: PartReasoning, Reasoning: &conversation.Reasoning{Text: "hmm", Signature: "sig"}},
		{Kind: PartText, Text: "Hel"},
		{Kind: PartText, Text: "lo"},
		{Kind: PartToolArgs, ToolCall: &conversation.ToolCall{ID: "c1", Name: "respond", Arguments: []byte(`{}`)}}, // progress: left out
		{Kind: PartToolCall, ToolCall: &call},
		{Kind: PartUsage, Usage: &Usage{InputTokens: 3, OutputTokens: 2}},
		{Kind: PartUsage, Usage: &Usage{OutputTokens: 1, Hosted: map[string]int{"web_search": 1}}},
		{Kind: PartHosted, Hosted: &search},
		{Kind: PartCitation, Citation: &cite},
		{Kind: PartUsage, Usage: &Usage{Hosted: map[string]int{"web_search": 2}}},
		{Kind: PartFinish, Finish: FinishToolCalls},
	}
	got, err := Collect(stream(parts, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Text:      "Hello",
		Reasoning: []conversation.Reasoning{{Text: "hmm", Signature: "sig"}},
		ToolCalls: []conversation.ToolCall{call},
		Usage:     Usage{InputTokens: 3, OutputTokens: 3, Hosted: map[string]int{"web_search": 3}},
		Finish:    FinishToolCalls,
		Hosted:    []conversation.HostedActivity{search},
		Citations: []conversation.Citation{cite},
	}
	want.Hosted[0].TextAt = len("Hello") // where it came in the text
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Collect (-want +got):\n%s", diff)
	}
	if got.Empty() {
		t.Error("Empty() = true for an answer with text and a call")
	}
}

func TestCollectKeepsPartialOnError(t *testing.T) {
	t.Parallel()
	cut := errors.New("stream cut")
	cite := conversation.Citation{Source: conversation.Source{URL: "https://a.test"}}
	got, err := Collect(stream([]Part{{Kind: PartText, Text: "par"}, {Kind: PartCitation, Citation: &cite}}, cut))
	if !errors.Is(err, cut) || got.Text != "par" {
		t.Fatalf("Collect = %+v, %v; want partial text and the cut error", got, err)
	}
	if len(got.Citations) != 1 || !got.Citations[0].Incomplete || cite.Incomplete {
		t.Errorf("citations of a cut answer = %+v; want one, marked incomplete (a copy)", got.Citations)
	}
	fragment := Part{Kind: PartToolArgs, ToolCall: &conversation.ToolCall{ID: "c1", Name: "respond", Arguments: []byte(`{"message":"Hi`)}}
	if got, _ := Collect(stream([]Part{fragment}, cut)); got.Started() {
		t.Errorf("Collect of argument fragments alone = %+v; want nothing started", got)
	}
	if !(&Response{Text: "  \n"}).Empty() {
		t.Error("whitespace-only answer is not Empty")
	}
}
