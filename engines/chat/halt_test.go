package chat

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

// cutModel answers its first call with text, then waits for the call to
// be cut (started receives then); later calls respond. It records the
// requests.
type cutModel struct {
	started chan struct{}
	mu      sync.Mutex
	reqs    []*llm.Request
}

func (m *cutModel) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	first := len(m.reqs) == 1
	m.mu.Unlock()
	return func(yield func(llm.Part, error) bool) {
		if first {
			if !yield(llm.Part{Kind: llm.PartText, Text: "Drafting"}, nil) {
				return
			}
			m.started <- struct{}{}
			<-ctx.Done()
			yield(llm.Part{}, ctx.Err())
			return
		}
		yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "r1", Name: "respond",
			Arguments: json.RawMessage(`{"message":"Short, then.","awaiting_user_input":true}`)}}, nil)
	}
}

// steerer is a Steerer whose Steer drains the messages in next, once.
type steerer struct {
	mu   sync.Mutex
	next []conversation.Event
}

func (s *steerer) Checkpoint(context.Context, []conversation.Event) error { return nil }

func (s *steerer) Steer(context.Context, []conversation.Event) ([]conversation.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.next
	s.next = nil
	return out, nil
}

// An interrupt cuts the model call in flight: what it wrote is kept for
// the model, and the next round's call sees the message that interrupted.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	model := &cutModel{started: make(chan struct{}, 1)}
	turn := oneTurn(t, &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}}}, model)
	interrupt := make(chan struct{}, 1)
	turn.Interrupt = interrupt
	msg := conversation.NewInboxMessage("9-0", conversation.KindUser, "user:ada", "Keep it short.")
	msg.InboxMessage.DuringTurn = true
	cp := &steerer{next: []conversation.Event{msg}}
	go func() {
		<-model.started
		interrupt <- struct{}{}
	}()
	out, err := (&Engine{}).Run(context.Background(), &turn, cp)
	if err != nil {
		t.Fatal(err)
	}
	if out.Next != lifecycle.AwaitUser || out.Halted {
		t.Errorf("outcome: next %s, halted %t; want await_user, not halted", out.Next, out.Halted)
	}
	if len(model.reqs) != 2 {
		t.Fatalf("model calls = %d, want 2", len(model.reqs))
	}
	var seen []string
	for _, m := range model.reqs[1].Messages {
		seen = append(seen, string(m.Role)+": "+m.Text())
	}
	if !slices.Contains(seen, "assistant: Drafting") || !slices.ContainsFunc(seen, func(s string) bool {
		return strings.HasPrefix(s, "user: [user message, sent while you were working") && strings.HasSuffix(s, "Keep it short.")
	}) {
		t.Errorf("the second call saw %q; want what the cut call wrote and the message", seen)
	}
}

// slowTool waits for its call to be cancelled, or for release; entered
// receives when a call starts.
type slowTool struct {
	name       string
	replayable bool
	entered    chan struct{}
	release    chan struct{}
}

func (s *slowTool) Definition() tools.Definition {
	return tools.Definition{Name: s.name, Description: "Slow.", Schema: json.RawMessage(`{"type":"object"}`), Replayable: s.replayable}
}

func (s *slowTool) Call(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
	s.entered <- struct{}{}
	select {
	case <-ctx.Done():
		return tools.Result{}, ctx.Err()
	case <-s.release:
		return tools.TextResult("finished"), nil
	}
}

// A halt while a tool runs: a tool harmless to run again is cancelled, any
// other finishes; the round's calls not yet run are answered as not run,
// no model call follows, and the turn ends halted with a notice.
func TestHaltDuringTools(t *testing.T) {
	t.Parallel()
	for _, replayable := range []bool{true, false} {
		tool := &slowTool{name: "slow", replayable: replayable, entered: make(chan struct{}, 1), release: make(chan struct{})}
		catalog := tools.BuiltinCatalog()
		catalog["slow"] = func(map[string]any) (tools.Tool, error) { return tool, nil }
		r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "slow"}}}
		reg, err := toolset.Build(catalog, r)
		if err != nil {
			t.Fatal(err)
		}
		calls := []conversation.ToolCall{
			{ID: "c1", Name: "slow", Arguments: json.RawMessage(`{}`)},
			{ID: "c2", Name: "slow", Arguments: json.RawMessage(`{}`)},
		}
		model := &answers{list: [][]conversation.ToolCall{calls}}
		turn := turnWith(r, model, reg)
		halt := make(chan struct{})
		turn.Halt = halt
		go func() {
			<-tool.entered
			close(halt)
			if !replayable {
				close(tool.release) // it finishes: the turn waited for it
			}
		}()
		out, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
		if err != nil {
			t.Fatal(err)
		}
		if !out.Halted || out.Next != lifecycle.Continue || model.calls != 1 {
			t.Errorf("replayable %t: halted %t, next %s, model calls %d; want halted, continue, 1", replayable, out.Halted, out.Next, model.calls)
		}
		results := map[string]string{}
		notice := false
		for _, e := range out.Events {
			if r := e.ToolCallResponse; r != nil {
				results[r.CallID] = conversation.TextOf(r.Content)
			}
			notice = notice || e.SystemNotice != nil && e.SystemNotice.Code == rounds.NoticeHalted
		}
		first := "finished"
		if replayable {
			first = "context canceled"
		}
		if !strings.Contains(results["c1"], first) || results["c2"] != rounds.HaltedCallError || !notice {
			t.Errorf("replayable %t: results %q, notice %t; want c1 %q, c2 not run, a notice", replayable, results, notice, first)
		}
	}
}

// answers answers its n-th call with the calls list[n].
type answers struct {
	list  [][]conversation.ToolCall
	calls int
}

func (a *answers) Generate(context.Context, *llm.Request) iter.Seq2[llm.Part, error] {
	calls := a.list[min(a.calls, len(a.list)-1)]
	a.calls++
	return func(yield func(llm.Part, error) bool) {
		for _, c := range calls {
			if !yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &c}, nil) {
				return
			}
		}
	}
}
