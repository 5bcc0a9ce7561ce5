package node

import (
	"context"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/zaphod"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// panelModel answers the heads of the built-in zaphod-panel by their
// system prompts, counting each one's calls; the pragmatist's call hangs
// while hang is set. The synthesis responds.
type panelModel struct {
	mu    sync.Mutex
	calls map[string]int
	hang  bool
	hung  chan struct{} // receives when the pragmatist's call hangs
}

func (m *panelModel) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	head := "synthesis"
	for _, h := range []string{"optimist", "skeptic", "pragmatist"} {
		if strings.Contains(req.System, "You are the "+h) {
			head = h
		}
	}
	m.mu.Lock()
	m.calls[head]++
	hang := m.hang && head == "pragmatist"
	m.mu.Unlock()
	return func(yield func(llm.Part, error) bool) {
		if hang {
			m.hung <- struct{}{}
			<-ctx.Done()
			yield(llm.Part{}, context.Cause(ctx))
			return
		}
		if head == "synthesis" {
			c := call("s1", "respond", `{"message":"The panel agrees.","awaiting_user_input":true}`)
			yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &c}, nil)
			return
		}
		yield(llm.Part{Kind: llm.PartText, Text: "The " + head + " says so."}, nil)
	}
}

func (m *panelModel) count(head string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[head]
}

// headsLogged returns the heads whose answers the log of pid holds.
func headsLogged(t *testing.T, n *Node, pid string) map[string]int {
	t.Helper()
	log, err := n.Log(context.Background(), pid, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range log {
		if name, ok := strings.CutPrefix(e.By, zaphod.ByHead); ok && e.ChatResponse != nil {
			out[name]++
		}
	}
	return out
}

// A zaphod turn whose node stops after two of its three heads answered is
// recovered on another node, which asks only the third head, then the
// synthesis; each head's answer is logged once.
func TestZaphodResumeAsksOnlyMissingHeads(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	model := &panelModel{calls: map[string]int{}, hang: true, hung: make(chan struct{}, 1)}
	commits := nodetest.NewCommits()
	cfg := Config{Redis: srv.Client(t), NodeID: "a", Recipes: recipes.Builtin(), Models: map[string]llm.Model{"default": model},
		OnCommit: commits.Add, LeaseTTL: time.Second, Grace: time.Millisecond}
	a := startNode(t, cfg)
	ctx := context.Background()
	rec, err := a.Create(ctx, NewProcess{Recipe: "zaphod-panel", Input: "Ship on Friday?"})
	if err != nil {
		t.Fatal(err)
	}
	<-model.hung
	deadline := time.Now().Add(nodetest.WaitTimeout)
	for got := headsLogged(t, a, rec.ID); got["optimist"] == 0 || got["skeptic"] == 0; got = headsLogged(t, a, rec.ID) {
		if time.Now().After(deadline) {
			t.Fatalf("the two heads' answers were not checkpointed: %v", got)
		}
		<-time.After(5 * time.Millisecond) // look again: a checkpoint has no signal of its own
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	model.mu.Lock()
	model.hang = false
	model.mu.Unlock()
	cfg.NodeID = "b"
	b := startNode(t, cfg)
	commits.Wait(t, "the recovered turn's commit", func(r store.Record) bool { return r.ID == rec.ID && r.Status.State == lifecycle.Blocked })

	for head, want := range map[string]int{"optimist": 1, "skeptic": 1, "pragmatist": 2, "synthesis": 1} {
		if got := model.count(head); got != want {
			t.Errorf("%s asked %d times, want %d", head, got, want)
		}
	}
	if got := headsLogged(t, b, rec.ID); got["optimist"] != 1 || got["skeptic"] != 1 || got["pragmatist"] != 1 {
		t.Errorf("heads' answers logged %v, want each once", got)
	}
	log, _ := b.Log(ctx, rec.ID, "", 0)
	var reply string
	for _, e := range conversation.UserView(log) {
		if r := e.ToolCallResponse; r != nil {
			reply = conversation.TextOf(r.Content)
		}
	}
	if reply != "The panel agrees." {
		t.Errorf("the user sees %q, want the synthesis's reply", reply)
	}
}

// kindsModel answers every built-in kind's turn by its system prompt: a
// chat turn responds, vogon-review's phases pass their gates, the heads of
// zaphod-panel answer in text and its synthesis responds.
type kindsModel struct{}

func (kindsModel) Generate(_ context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	var c conversation.ToolCall
	switch sys := req.System; {
	case strings.Contains(sys, "Phase 1 of 3: draft"):
		c = call("v1", "phase_done", `{"result":{"title":"Brain","body":"Brain runs LLM agents as processes."}}`)
	case strings.Contains(sys, "Phase 2 of 3: critique"):
		c = call("v2", "phase_done", `{"result":{"issues":[]}}`)
	case strings.Contains(sys, "Phase 3 of 3: final"):
		c = call("v3", "phase_done", `{"result":"Brain runs LLM agents as durable processes."}`)
	case strings.Contains(sys, "You are the optimist"), strings.Contains(sys, "You are the skeptic"), strings.Contains(sys, "You are the pragmatist"):
		return func(yield func(llm.Part, error) bool) {
			yield(llm.Part{Kind: llm.PartText, Text: "An adviser's view."}, nil)
		}
	default: // the default recipe's chat turn, and the panel's synthesis
		c = call("r1", "respond", `{"message":"Done.","awaiting_user_input":true}`)
	}
	return func(yield func(llm.Part, error) bool) { yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &c}, nil) }
}

// Two nodes with their engines split, chat on one and vogon and zaphod on
// the other (brain serve --engines), each run only the turns of their own
// kinds: the vogon and zaphod processes wait for the second node, though
// the chat node was there first, and every turn of each process was
// claimed and committed by the node of its kind.
func TestEnginesSplitChatFromVogonAndZaphod(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	chatCommits, otherCommits := nodetest.NewCommits(), nodetest.NewCommits()
	base := Config{Recipes: recipes.Builtin(), Models: map[string]llm.Model{"default": kindsModel{}}}
	chatCfg, otherCfg := base, base
	chatCfg.Redis, chatCfg.NodeID, chatCfg.Engines, chatCfg.OnCommit = srv.Client(t), "chat-node", []string{"chat"}, chatCommits.Add
	otherCfg.Redis, otherCfg.NodeID, otherCfg.Engines, otherCfg.OnCommit = srv.Client(t), "other-node", []string{"vogon", "zaphod"}, otherCommits.Add
	c := startNode(t, chatCfg) // alone at first: a node that ran every kind would take the vogon and zaphod turns
	ctx := context.Background()
	home := map[string]string{} // process id -> the node that must run its turns
	create := func(recipe, node string) string {
		rec, err := c.Create(ctx, NewProcess{Recipe: recipe, Input: "A note on brain."})
		if err != nil {
			t.Fatal(err)
		}
		home[rec.ID] = node
		return rec.ID
	}
	chatID := create("default", "chat-node")
	vogonID, zaphodID := create("vogon-review", "other-node"), create("zaphod-panel", "other-node")
	blocked := func(id string) func(store.Record) bool {
		return func(r store.Record) bool { return r.ID == id && r.Status.State == lifecycle.Blocked }
	}
	chatCommits.Wait(t, "the chat turn on the chat node", blocked(chatID))
	startNode(t, otherCfg)
	otherCommits.Wait(t, "the vogon turn on the other node", blocked(vogonID))
	otherCommits.Wait(t, "the zaphod turn on the other node", blocked(zaphodID))

	for node, commits := range map[string]*nodetest.Commits{"chat-node": chatCommits, "other-node": otherCommits} {
		for _, r := range commits.Records() {
			if home[r.ID] != node {
				t.Errorf("%s committed a turn of %s, a process of %s", node, r.ID, home[r.ID])
			}
		}
	}
	for id, node := range home {
		log, err := c.Log(ctx, id, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		wakes := 0
		for _, e := range log {
			if sc := e.StateChange; sc != nil && sc.Event == string(lifecycle.Wake) {
				wakes++
				if e.By != "node:"+node {
					t.Errorf("process %s: a turn claimed by %s, want node:%s", id, e.By, node)
				}
			}
		}
		if wakes == 0 {
			t.Errorf("process %s: no turn in its log", id)
		}
	}
}
