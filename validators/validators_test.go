package validators

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
)

func result(text string, isError bool, audience ...conversation.Role) conversation.Event {
	b := conversation.TextBlock(text)
	if len(audience) > 0 {
		b = b.For(audience...)
	}
	return conversation.NewToolCallResponse("c1", "lookup", []conversation.Block{b}, isError)
}

func TestNoToolCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		v      NoToolCall
		answer Answer
		want   Correction
		fires  bool
	}{
		{"tool call passes", NoToolCall{}, Answer{Text: "working", ToolCalls: 1}, Correction{}, false},
		{"text only fires", NoToolCall{}, Answer{Text: "I'll look it up."}, Correction{NoToolCallName, DefaultNoToolCallCorrection}, true},
		{"empty fires", NoToolCall{}, Answer{}, Correction{NoToolCallName, DefaultNoToolCallCorrection}, true},
		{"override text", NoToolCall{Correction: "Call a tool."}, Answer{Text: "x"}, Correction{NoToolCallName, "Call a tool."}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, fires := tt.v.Check(&tt.answer)
			if fires != tt.fires || !cmp.Equal(got, tt.want) {
				t.Errorf("Check = %+v, %v; want %+v, %v", got, fires, tt.want, tt.fires)
			}
		})
	}
}

func TestDataRelay(t *testing.T) {
	t.Parallel()
	v := DataRelay{MinToolResultChars: 500, MaxReplyChars: 200}
	long := strings.Repeat("x", 500)
	tests := []struct {
		name   string
		v      DataRelay
		answer Answer
		fires  bool
	}{
		{"brief reply after long result", v, Answer{Turn: []conversation.Event{result(long, false)}, Reply: "Done.", IsReply: true}, true},
		{"reply of exactly max chars still brief", v, Answer{Turn: []conversation.Event{result(long, false)}, Reply: strings.Repeat("r", 200), IsReply: true}, true},
		{"reply one char over max passes", v, Answer{Turn: []conversation.Event{result(long, false)}, Reply: strings.Repeat("r", 201), IsReply: true}, false},
		{"result one char short passes", v, Answer{Turn: []conversation.Event{result(long[:499], false)}, Reply: "ok", IsReply: true}, false},
		{"error results do not count", v, Answer{Turn: []conversation.Event{result(long, true)}, Reply: "ok", IsReply: true}, false},
		{"user-only blocks do not count", v, Answer{Turn: []conversation.Event{result(long, false, conversation.RoleUser)}, Reply: "ok", IsReply: true}, false},
		{"not a reply", v, Answer{Turn: []conversation.Event{result(long, false)}, ToolCalls: 1}, false},
		{"data shown as a presentation", v, Answer{Turn: []conversation.Event{result(long, false),
			{Type: conversation.TypePresentation, Presentation: &conversation.Presentation{Summary: "the data"}}}, Reply: "See above.", IsReply: true}, false},
		// Characters, not bytes: 200 Japanese characters are 600 bytes and
		// still a brief reply; 500 of them are a long result.
		{"counts characters", v, Answer{Turn: []conversation.Event{result(strings.Repeat("データ", 167), false)}, Reply: strings.Repeat("はい", 100), IsReply: true}, true},
		{"multibyte reply over max passes", v, Answer{Turn: []conversation.Event{result(long, false)}, Reply: strings.Repeat("ü", 201), IsReply: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, fires := tt.v.Check(&tt.answer)
			if fires != tt.fires {
				t.Fatalf("Check fires = %v, want %v", fires, tt.fires)
			}
			if fires && (got.Validator != DataRelayName || got.Text != DefaultDataRelayCorrection) {
				t.Errorf("correction = %+v", got)
			}
		})
	}
	override := DataRelay{MinToolResultChars: 10, MaxReplyChars: 5, Correction: "Relay it."}
	got, fires := override.Check(&Answer{Turn: []conversation.Event{result("0123456789", false)}, Reply: "ok", IsReply: true})
	if !fires || got.Text != "Relay it." {
		t.Errorf("override: Check = %+v, %v", got, fires)
	}
}

func TestFunc(t *testing.T) {
	t.Parallel()
	var v Validator = Func{ID: "always", Fn: func(*Answer) (Correction, bool) { return Correction{Validator: "always", Text: "no"}, true }}
	if c, ok := v.Check(&Answer{}); !ok || v.Name() != "always" || c.Text != "no" {
		t.Errorf("Func: %v %v %q", c, ok, v.Name())
	}
}
