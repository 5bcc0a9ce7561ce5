package conversation

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exchange is one user message answered after a tool call whose result
// holds resultBytes bytes: user, assistant (the call), tool, assistant.
func exchange(n, resultBytes int) []Message {
	id := fmt.Sprintf("c%d", n)
	return []Message{
		msg(MessageUser, fmt.Sprintf("question %d", n)),
		{Role: MessageAssistant, ToolCalls: []ToolCall{{ID: id, Name: "search", Arguments: json.RawMessage(`{}`)}}},
		tool(id, "search", false, TextBlock(strings.Repeat("x", resultBytes))),
		msg(MessageAssistant, fmt.Sprintf("answer %d", n)),
	}
}

// cleared is m with its content left out, as Fit leaves it.
func cleared(m Message) Message {
	m.Content = []Block{TextBlock(ClearedResult)}
	return m
}

// noted is m, a user message, with the omitted note before its content.
func noted(m Message) Message {
	m.Content = append([]Block{TextBlock(OmittedNote)}, m.Content...)
	return m
}

func estimate(msgs []Message) int {
	n := 0
	for i := range msgs {
		n += EstimateTokens(&msgs[i])
	}
	return n
}

func concat(parts ...[]Message) []Message {
	var out []Message
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// talk is one exchange without tools: a user message of userBytes bytes
// and its answer.
func talk(n, userBytes int) []Message {
	return []Message{
		msg(MessageUser, fmt.Sprintf("%d: %s", n, strings.Repeat("y", userBytes))),
		msg(MessageAssistant, fmt.Sprintf("answer %d", n)),
	}
}

func TestFit(t *testing.T) {
	t.Parallel()
	// Results and messages of 10,000 tokens; everything else is a few.
	const big = 30_000
	e1, e2, e3 := exchange(1, big), exchange(2, big), exchange(3, big)
	current := []Message{msg(MessageUser, "question 4")}
	chat := concat(e1, e2, e3, current)
	whole := estimate(chat)
	saved := EstimateTokens(&e1[2]) - EstimateTokens(new(cleared(e1[2])))
	t1, t2, t3 := talk(1, big), talk(2, big), talk(3, big)
	talks := concat(t1, t2, t3, current)
	short := exchange(5, 3)

	// A worker's task: one user message, then rounds of tool calls, the
	// first one's result larger than a quarter of the whole.
	task := exchange(1, 2*big)[:3]
	for n := 2; n <= 4; n++ {
		task = append(task, exchange(n, big)[1:3]...)
	}

	tests := []struct {
		name   string
		msgs   []Message
		budget int
		want   []Message
		fit    Fitting
	}{
		{name: "fits", msgs: chat, budget: whole, want: chat},
		{name: "no bound", msgs: chat, budget: 0, want: chat},
		{
			name: "the oldest tool result is cleared first", msgs: chat, budget: whole - 1,
			want: concat(e1[:2], []Message{cleared(e1[2])}, e1[3:], e2, e3, current),
			fit:  Fitting{Cleared: 1},
		},
		{
			name: "then the next ones, up to the current exchange", msgs: chat, budget: whole - saved - 1,
			want: concat(e1[:2], []Message{cleared(e1[2])}, e1[3:], e2[:2], []Message{cleared(e2[2])}, e2[3:], e3, current),
			fit:  Fitting{Cleared: 2},
		},
		{
			name: "then the oldest exchanges go whole, the rest starting with a note", msgs: talks, budget: estimate(talks) - 1,
			want: concat([]Message{noted(t2[0])}, t2[1:], t3, current),
			fit:  Fitting{Dropped: 2},
		},
		{
			name: "the current exchange is kept when nothing else fits", msgs: chat, budget: 1,
			want: []Message{noted(current[0])},
			fit:  Fitting{Dropped: 12},
		},
		{
			name: "a long task: older results cleared, not the last call's", msgs: task, budget: estimate(task) - 1,
			want: concat(task[:2], []Message{cleared(task[2])}, task[3:]),
			fit:  Fitting{Cleared: 1},
		},
		{
			name: "a long task that cannot fit: the last call's result stays", msgs: task, budget: 1,
			want: concat(task[:2], []Message{cleared(task[2])}, task[3:4], []Message{cleared(task[4])},
				task[5:6], []Message{cleared(task[6])}, task[7:]),
			fit: Fitting{Cleared: 3},
		},
		{
			name: "a result shorter than the placeholder stays as it is",
			msgs: concat(short, e2, current), budget: estimate(concat(short, e2, current)) - 1,
			want: concat(short, e2[:2], []Message{cleared(e2[2])}, e2[3:], current),
			fit:  Fitting{Cleared: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := concat(tt.msgs)
			got, fit := Fit(tt.msgs, tt.budget)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Fit (-want +got):\n%s", diff)
			}
			if fit != tt.fit {
				t.Errorf("Fitting = %+v, want %+v", fit, tt.fit)
			}
			if fit.Fitted() != (tt.fit != Fitting{}) {
				t.Errorf("Fitted() = %v for %+v", fit.Fitted(), fit)
			}
			if diff := cmp.Diff(before, tt.msgs); diff != "" {
				t.Errorf("Fit changed its input (-before +after):\n%s", diff)
			}
			if tt.budget > 1 && estimate(got) > tt.budget {
				t.Errorf("the fitted view is estimated at %d tokens, over the budget of %d", estimate(got), tt.budget)
			}
		})
	}
}

// Once a conversation is cut, the cut stays where it is while the
// conversation grows by less than a quarter of the budget: consecutive
// model calls begin alike, as providers' prompt caches need.
func TestFitKeepsItsCut(t *testing.T) {
	t.Parallel()
	var msgs []Message
	for n := 1; n <= 40; n++ { // small results: each cleared one saves little
		msgs = append(msgs, exchange(n, 300)...)
	}
	msgs = append(msgs, msg(MessageUser, "go on"))
	// The cut is a multiple of step, the excess rounded up: an excess one
	// above a multiple may grow by step-1 without moving it.
	budget := estimate(msgs) / 2
	step := budget / 4
	budget = 4 * step
	for estimate(msgs)%step != 1 {
		msgs[len(msgs)-1].Content[0].Text += "zzz"
	}
	first, fit := Fit(msgs, budget)
	if !fit.Fitted() {
		t.Fatal("nothing cut")
	}
	grown := msgs
	for n := 0; estimate(grown)-estimate(msgs) < step/2; n++ {
		id := fmt.Sprintf("g%d", n)
		grown = append(grown,
			Message{Role: MessageAssistant, ToolCalls: []ToolCall{{ID: id, Name: "peek", Arguments: json.RawMessage(`{}`)}}},
			tool(id, "peek", false, TextBlock("a short result")))
	}
	later, laterFit := Fit(grown, budget)
	if laterFit != fit {
		t.Errorf("the cut moved as the conversation grew: %+v, then %+v", fit, laterFit)
	}
	if diff := cmp.Diff(first, later[:len(first)]); diff != "" {
		t.Errorf("the grown conversation's view does not begin as the first one's (-first +later):\n%s", diff)
	}
}

func TestFitReturnsAViewThatFitsAsItIs(t *testing.T) {
	t.Parallel()
	msgs := exchange(1, 10)
	got, _ := Fit(msgs, estimate(msgs))
	if &got[0] != &msgs[0] {
		t.Error("Fit copied a view that fits")
	}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    Message
		want int
	}{
		{name: "empty", m: Message{Role: MessageUser}, want: 4},
		{name: "text, rounded up", m: msg(MessageUser, "abcd"), want: 4 + 2},
		{name: "several scripts count their bytes", m: msg(MessageUser, "日本語"), want: 4 + 3},
		{name: "an image counts the same whatever its size", m: Message{Role: MessageTool, Content: []Block{ImageBlock("image/png", strings.Repeat("A", 90000))}}, want: 4 + 1600},
		{
			name: "tool calls and replayed reasoning count",
			m: Message{
				Role:      MessageAssistant,
				Reasoning: []Reasoning{{Text: "abc", Signature: "sig", Payload: &ProviderPayload{Value: json.RawMessage(`"x"`)}}},
				ToolCalls: []ToolCall{{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":1}`)}},
			},
			want: 4 + (3+3+3+2+6+7)/3,
		},
		{
			name: "hosted activity and citations sent back count",
			m: Message{
				Role:      MessageAssistant,
				Hosted:    []HostedActivity{{Input: json.RawMessage(`{"q":1}`), Payload: &ProviderPayload{Value: json.RawMessage(`"abcdefgh"`)}}},
				Citations: []Citation{{Replay: &ProviderPayload{Value: json.RawMessage(`"xy"`)}}},
			},
			want: 4 + (7+10+4)/3,
		},
		{name: "a tool result names its call", m: tool("c1", "get", false, TextBlock("ok")), want: 4 + 3},
	}
	for _, tt := range tests {
		if got := EstimateTokens(&tt.m); got != tt.want {
			t.Errorf("%s: EstimateTokens = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// NoteOmitted starts a view with the omitted note once, replacing its first
// message without writing to the blocks it shares with others.
func TestNoteOmitted(t *testing.T) {
	t.Parallel()
	blocks := []Block{TextBlock("a question")}
	msgs := []Message{{Role: MessageUser, Content: blocks}, {Role: MessageAssistant, Content: []Block{TextBlock("an answer")}}}
	if !NoteOmitted(msgs) {
		t.Fatal("NoteOmitted did not change a view without the note")
	}
	want := []Message{noted(Message{Role: MessageUser, Content: []Block{TextBlock("a question")}}), msgs[1]}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("noted view (-want +got):\n%s", diff)
	}
	if NoteOmitted(msgs) || len(msgs[0].Content) != 2 {
		t.Errorf("NoteOmitted noted a view twice: %+v", msgs[0])
	}
	if blocks[0].Text != "a question" || len(blocks) != 1 {
		t.Errorf("the first message's blocks were written to: %+v", blocks)
	}
	if NoteOmitted(nil) {
		t.Error("NoteOmitted changed an empty view")
	}
	if got := EstimateTokens(&msgs[0]) - EstimateTokens(&Message{Role: MessageUser, Content: blocks}); got != OmittedNoteTokens {
		t.Errorf("the note adds %d tokens, OmittedNoteTokens says %d", got, OmittedNoteTokens)
	}
}
