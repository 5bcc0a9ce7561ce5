package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

const script = `
turns:
  - rounds:
      - calls:
          - name: lookup
            args: {q: "x"}
      - calls:
          - name: respond
            args: {message: "first", awaiting_user_input: true}
  - match: "weather"
    rounds:
      - text: "It is sunny."
  - rounds:
      - {}
      - error: "boom"
`

func user(s string) conversation.Message {
	return conversation.Message{Role: conversation.MessageUser, Content: []conversation.Block{conversation.TextBlock(s)}}
}

var (
	assistant = conversation.Message{Role: conversation.MessageAssistant}
	tool      = conversation.Message{Role: conversation.MessageTool}
)

func TestPlaysByPosition(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	m := New(s)
	tests := []struct {
		name    string
		msgs    []conversation.Message
		want    llm.Response
		wantErr string
	}{
		{
			name: "turn 1 round 1",
			msgs: []conversation.Message{user("hi")},
			want: llm.Response{
				ToolCalls: []conversation.ToolCall{{ID: "call_1_1_1", Name: "lookup", Arguments: json.RawMessage(`{"q":"x"}`)}},
				Finish:    llm.FinishToolCalls,
			},
		},
		{
			name: "turn 1 round 2",
			msgs: []conversation.Message{user("hi"), user("and more"), assistant, tool},
			want: llm.Response{
				ToolCalls: []conversation.ToolCall{{ID: "call_1_2_1", Name: "respond", Arguments: json.RawMessage(`{"awaiting_user_input":true,"message":"first"}`)}},
				Finish:    llm.FinishToolCalls,
			},
		},
		{
			name: "match wins over order",
			msgs: []conversation.Message{user("hi"), assistant, tool, user("the weather?")},
			want: llm.Response{Text: "It is sunny.", Finish: llm.FinishStop},
		},
		{
			name: "second unmatched turn plays an empty answer",
			msgs: []conversation.Message{user("hi"), assistant, tool, user("again")},
			want: llm.Response{Finish: llm.FinishStop},
		},
		{
			name:    "a correction after an empty answer counts as a round",
			msgs:    []conversation.Message{user("hi"), assistant, tool, user("again"), {Role: conversation.MessageSystem}},
			wantErr: "scripted: boom",
		},
		{
			name:    "scripted error",
			msgs:    []conversation.Message{user("hi"), assistant, tool, user("again"), assistant},
			wantErr: "scripted: boom",
		},
		{
			name: "past the last turn the last unmatched turn repeats",
			msgs: []conversation.Message{user("a"), assistant, user("b"), assistant, user("c")},
			want: llm.Response{Finish: llm.FinishStop},
		},
		{
			name:    "round past the script",
			msgs:    []conversation.Message{user("hi"), assistant, tool, assistant, tool},
			wantErr: "turns[0] has 2 rounds but round 3 was asked for",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := llm.Collect(m.Generate(context.Background(), &llm.Request{Messages: tt.msgs}))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecordsRequests(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	m := New(s)
	req := &llm.Request{System: "be brief", Messages: []conversation.Message{user("hi")}}
	if _, err := llm.Collect(m.Generate(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	got := m.Requests()
	if len(got) != 1 || got[0].System != "be brief" {
		t.Fatalf("Requests() = %+v, want the one request", got)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"turns: []":             "no turns",
		"turns: [{rounds: []}]": "turns[0] has no rounds",
		"turns: [{rounds: [{calls: [{args: {}}]}]}]": "turns[0].rounds[0].calls[0]: name is required",
		"turns: [{rounds: [{txt: hi}]}]":             "field txt not found",
		"pace: -1s\nturns: [{rounds: [{}]}]":         "pace must not be negative (got -1s)",
	}
	for in, want := range tests {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", in, err, want)
		}
	}
}

func TestRawArgsAreSentVerbatim(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(`turns: [{rounds: [{calls: [{name: x, raw_args: '{"broken'}]}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := llm.Collect(New(s).Generate(context.Background(), &llm.Request{Messages: []conversation.Message{user("go")}}))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.ToolCalls[0].Arguments) != `{"broken` {
		t.Fatalf("arguments = %s", got.ToolCalls[0].Arguments)
	}
}

// sunny is a script of one answer: text, then a call.
const sunny = `
turns:
  - rounds:
      - text: "It's sunny in Zürich today."
        calls:
          - name: respond
            args: {message: "It's sunny."}
`

// TestStreamsInPieces checks that an answer streams as a real model's:
// its text in deltas and its call's arguments in fragments before the
// call, cut at most every 16 bytes, at the start of a character.
func TestStreamsInPieces(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(sunny))
	if err != nil {
		t.Fatal(err)
	}
	got, err := llmtest.Drain(t, context.Background(), New(s), &llm.Request{Messages: []conversation.Message{user("weather?")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Part{
		llmtest.TextPart("It's sunny in Z"), llmtest.TextPart("ürich today."), // ü would be cut after 16 bytes
		llmtest.ArgsPart("call_1_1_1", "respond", `{"message":"It's`), llmtest.ArgsPart("call_1_1_1", "respond", ` sunny."}`),
		llmtest.CallPart("call_1_1_1", "respond", `{"message":"It's sunny."}`),
		{Kind: llm.PartFinish, Finish: llm.FinishToolCalls},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
	llmtest.CheckToolArgs(t, got, 2)
}

// TestPace checks that a paced model waits between parts, and that a
// cancelled call ends the wait with the context's error, what was streamed
// before it kept.
func TestPace(t *testing.T) {
	t.Parallel()
	play := func(ctx context.Context, cancel func(), pace time.Duration) (llm.Response, error) {
		s, err := Parse([]byte(sunny))
		if err != nil {
			t.Fatal(err)
		}
		s.Pace = pace
		stream := New(s).Generate(ctx, &llm.Request{Messages: []conversation.Message{user("weather?")}})
		return llm.Collect(func(yield func(llm.Part, error) bool) {
			for p, err := range stream {
				if !yield(p, err) {
					return
				}
				cancel() // after the first part
			}
		})
	}

	t.Run("a cancelled call ends the wait", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got, err := play(ctx, cancel, time.Hour)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		if diff := cmp.Diff(llm.Response{Text: "It's sunny in Z"}, got); diff != "" {
			t.Errorf("the answer before the cancel (-want +got):\n%s", diff)
		}
	})
	t.Run("the model waits between parts", func(t *testing.T) {
		t.Parallel()
		const pace = 2 * time.Millisecond
		start := time.Now()
		got, err := play(context.Background(), func() {}, pace)
		if err != nil {
			t.Fatal(err)
		}
		// Six parts, five waits: at least that long, however fast the machine.
		if elapsed := time.Since(start); elapsed < 5*pace {
			t.Errorf("the answer took %s, want at least %s", elapsed, 5*pace)
		}
		if got.Text != "It's sunny in Zürich today." || len(got.ToolCalls) != 1 {
			t.Errorf("answer %+v, want the whole of it", got)
		}
	})
}

// TestPaceParses checks that a script sets its pace.
func TestPaceParses(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte("pace: 40ms\nturns: [{rounds: [{text: hi}]}]"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Pace != 40*time.Millisecond {
		t.Errorf("pace %s, want 40ms", s.Pace)
	}
}

func TestUnplayed(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	m := New(s)
	for _, msgs := range [][]conversation.Message{
		{user("hi")},
		{user("hi"), assistant, tool, user("the weather?")},
	} {
		_, _ = llm.Collect(m.Generate(context.Background(), &llm.Request{Messages: msgs}))
	}
	want := []string{"turns[0].rounds[1]", "turns[2].rounds[0]", "turns[2].rounds[1]"}
	if diff := cmp.Diff(want, m.Unplayed()); diff != "" {
		t.Errorf("Unplayed (-want +got):\n%s", diff)
	}
	if got := m.WithoutRecording().Unplayed(); got != nil {
		t.Errorf("a model without recording reports %v, want none", got)
	}
}

// TestPlaysBySystemPrompt: a turn with a system is played only for
// requests whose system prompt contains it, as a zaphod turn's heads are.
func TestPlaysBySystemPrompt(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(`
turns:
  - system: "optimist"
    rounds: [{text: "yes"}]
  - system: "skeptic"
    rounds: [{text: "no"}]
  - rounds: [{text: "maybe"}]
`))
	if err != nil {
		t.Fatal(err)
	}
	m := New(s)
	for system, want := range map[string]string{"You are the optimist.": "yes", "You are the skeptic.": "no", "Compose.": "maybe"} {
		resp, err := llm.Collect(m.Generate(context.Background(), &llm.Request{System: system, Messages: []conversation.Message{user("hi")}}))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != want {
			t.Errorf("system %q: got %q, want %q", system, resp.Text, want)
		}
	}
}
