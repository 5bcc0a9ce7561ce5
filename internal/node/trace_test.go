package node

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// spans records the spans a TracerProvider ends, for tests to wait on.
type spans struct {
	*tracetest.SpanRecorder
	ended chan struct{}
}

// newSpans returns a recorder and the provider whose spans it records.
func newSpans(t *testing.T) (*spans, trace.TracerProvider) {
	s := &spans{SpanRecorder: tracetest.NewSpanRecorder(), ended: make(chan struct{}, 1)}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return s, tp
}

func (s *spans) OnEnd(span sdktrace.ReadOnlySpan) {
	s.SpanRecorder.OnEnd(span)
	select {
	case s.ended <- struct{}{}:
	default:
	}
}

// wait returns the spans ended once ok says they are all there.
func (s *spans) wait(t *testing.T, what string, ok func([]sdktrace.ReadOnlySpan) bool) []sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if ended := s.Ended(); ok(ended) {
			return ended
		}
		select {
		case <-s.ended:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; spans ended: %s", what, names(s.Ended()))
		}
	}
}

// turnEnded returns a condition: a turn ended with outcome (n of them).
func turnsEnded(n int, outcome string) func([]sdktrace.ReadOnlySpan) bool {
	return func(ended []sdktrace.ReadOnlySpan) bool {
		k := 0
		for _, s := range ended {
			if strings.HasPrefix(s.Name(), "invoke_agent ") && attrs(s)["brain.turn.outcome"] == outcome {
				k++
			}
		}
		return k >= n
	}
}

func names(ss []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name()
	}
	return out
}

// attrs returns a span's attributes as strings.
func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := make(map[string]string)
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// turnTrace is what a test checks of one turn's span: its name, outcome,
// the names of its children in order and of the spans it links to.
type turnTrace struct {
	Name, Outcome string
	Children      []string
	Links         []string
}

// turnTraces returns the turns among ended, in the order they started.
func turnTraces(t *testing.T, ended []sdktrace.ReadOnlySpan) []turnTrace {
	t.Helper()
	slices.SortFunc(ended, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	byID := make(map[trace.SpanID]sdktrace.ReadOnlySpan)
	for _, s := range ended {
		byID[s.SpanContext().SpanID()] = s
	}
	var turns []turnTrace
	for _, s := range ended {
		if !strings.HasPrefix(s.Name(), "invoke_agent ") {
			continue
		}
		if s.Parent().IsValid() {
			t.Errorf("the turn span %s has a parent; want a root", s.Name())
		}
		tt := turnTrace{Name: s.Name(), Outcome: attrs(s)["brain.turn.outcome"]}
		for _, c := range ended {
			if c.Parent().SpanID() == s.SpanContext().SpanID() {
				tt.Children = append(tt.Children, c.Name())
			}
		}
		for _, l := range s.Links() {
			if linked, ok := byID[l.SpanContext.SpanID()]; ok {
				tt.Links = append(tt.Links, linked.Name())
			} else {
				tt.Links = append(tt.Links, "unknown span "+l.SpanContext.SpanID().String())
			}
		}
		turns = append(turns, tt)
	}
	return turns
}

// A conversation of two turns, the first spawning a worker whose report
// wakes the second, is one trace per turn: each turn's model calls and
// tool calls are its children; the worker's turn links to the call that
// spawned it, and the parent's second turn to the worker's turn.
func TestTraceOfAConversation(t *testing.T) {
	t.Parallel()
	rec, tp := newSpans(t)
	_, parent := delegating(t, Config{Redis: testutil.Redis(t), TracerProvider: tp},
		func(r store.Record) bool { return r.Status.State == lifecycle.Blocked })
	// Every turn's span: the first's may end after the others committed,
	// its goroutine held up between its commit and its span's end.
	ended := rec.wait(t, "the conversation's three turns", func(ended []sdktrace.ReadOnlySpan) bool {
		return turnsEnded(1, "continue")(ended) && turnsEnded(1, "finish")(ended) && turnsEnded(1, "await_user")(ended)
	})

	want := []turnTrace{
		{Name: "invoke_agent arthur", Outcome: "continue",
			Children: []string{"chat", "execute_tool spawn_worker", "chat", "execute_tool respond"}},
		{Name: "invoke_agent marvin-worker", Outcome: "finish",
			Children: []string{"chat", "execute_tool finish_task"}, Links: []string{"execute_tool spawn_worker"}},
		{Name: "invoke_agent arthur", Outcome: "await_user",
			Children: []string{"chat", "execute_tool respond"}, Links: []string{"invoke_agent marvin-worker"}},
	}
	if diff := cmp.Diff(want, turnTraces(t, ended)); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}

	first := func(name string) map[string]string {
		for _, s := range ended {
			if s.Name() == name {
				return attrs(s)
			}
		}
		t.Fatalf("no span %s", name)
		return nil
	}
	turn := first("invoke_agent arthur")
	for k, v := range map[string]string{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "arthur", "gen_ai.conversation.id": parent.ID,
		"brain.process.id": parent.ID, "brain.turn.outcome": "continue",
	} {
		if turn[k] != v {
			t.Errorf("turn span: %s = %q, want %q", k, turn[k], v)
		}
	}
	if !strings.HasPrefix(turn["brain.turn.id"], "t_") {
		t.Errorf("turn span: brain.turn.id = %q, want the turn's id", turn["brain.turn.id"])
	}
	chat := first("chat")
	for k, v := range map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "default", "gen_ai.response.finish_reasons": `["tool_call"]`,
	} {
		if chat[k] != v {
			t.Errorf("chat span: %s = %q, want %q", k, chat[k], v)
		}
	}
	tool := first("execute_tool spawn_worker")
	for k, v := range map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "spawn_worker", "gen_ai.tool.call.id": "call_3_1_1", // the script's third turn
	} {
		if tool[k] != v {
			t.Errorf("execute_tool span: %s = %q, want %q", k, tool[k], v)
		}
	}
}

// The span context on the context of a Create or a Send travels with the
// message through Redis: the turn that drains it, on another node, links
// to it.
func TestTurnLinksToThePostersSpan(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	model := nodetest.Script(t, `
turns:
  - rounds:
      - calls: [{name: respond, args: {message: "ok"}}]
`)
	poster, err := New(Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, Recipes: recipes.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	rec, tp := newSpans(t)
	startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, Recipes: recipes.Builtin(), TracerProvider: tp})

	posting := func(trace_, span byte) (context.Context, trace.SpanContext) {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{trace_}, SpanID: trace.SpanID{span}, TraceFlags: trace.FlagsSampled, Remote: true})
		return trace.ContextWithRemoteSpanContext(context.Background(), sc), sc
	}
	createCtx, created := posting(1, 1)
	p, err := poster.Create(createCtx, NewProcess{Recipe: "arthur", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	rec.wait(t, "the first turn", turnsEnded(1, "await_user"))
	sendCtx, sent := posting(2, 2)
	if _, err := poster.Send(sendCtx, p.ID, "user", "again", ""); err != nil {
		t.Fatal(err)
	}
	ended := rec.wait(t, "the second turn", turnsEnded(2, "await_user"))

	var got [][]trace.SpanContext
	for _, s := range ended {
		if strings.HasPrefix(s.Name(), "invoke_agent ") {
			var links []trace.SpanContext
			for _, l := range s.Links() {
				links = append(links, l.SpanContext.WithRemote(true))
			}
			got = append(got, links)
		}
	}
	want := [][]trace.SpanContext{{created}, {sent}}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b trace.SpanContext) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("the turns' links (-want +got):\n%s", diff)
	}
}

// What model calls were sent and answered reaches their spans only when
// Config.CaptureMessageContent says so.
func TestContentCapture(t *testing.T) {
	t.Parallel()
	for _, capture := range []bool{false, true} {
		rec, tp := newSpans(t)
		model := nodetest.Script(t, `
turns:
  - rounds:
      - calls: [{name: respond, args: {message: "forty-two"}}]
`)
		n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Recipes: recipes.Builtin(),
			TracerProvider: tp, CaptureMessageContent: capture})
		if _, err := n.Create(context.Background(), NewProcess{Recipe: "arthur", Input: "the question"}); err != nil {
			t.Fatal(err)
		}
		ended := rec.wait(t, "the turn", turnsEnded(1, "await_user"))
		var chat map[string]string
		for _, s := range ended {
			if s.Name() == "chat" {
				chat = attrs(s)
			}
		}
		in, out, sys := chat["gen_ai.input.messages"], chat["gen_ai.output.messages"], chat["gen_ai.system_instructions"]
		switch {
		case !capture && in+out+sys != "":
			t.Errorf("captured without CaptureMessageContent: input %q, output %q, system %q", in, out, sys)
		case capture && (!strings.Contains(in, `{"role":"user","parts":[{"type":"text","content":"the question"}]}`) ||
			!strings.Contains(out, `"name":"respond","arguments":{"message":"forty-two"}`) || !strings.Contains(out, `"finish_reason":"tool_call"`) ||
			!strings.Contains(sys, "You are Arthur")):
			t.Errorf("with CaptureMessageContent: input %s\noutput %s\nsystem %s", in, out, sys)
		}
	}
}
