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

// Two nodes with their engines split, chat on one and zaphod on the
// other, each run only the turns of their own kind: the zaphod process
// waits for the zaphod node, though the chat node was there first.
func TestEnginesSplitChatAndZaphod(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	model := &panelModel{calls: map[string]int{}, hung: make(chan struct{}, 1)}
	chatCommits, zaphodCommits := nodetest.NewCommits(), nodetest.NewCommits()
	base := Config{Recipes: recipes.Builtin(), Models: map[string]llm.Model{"default": model}}
	chatCfg, zaphodCfg := base, base
	chatCfg.Redis, chatCfg.NodeID, chatCfg.Engines, chatCfg.OnCommit = srv.Client(t), "chat-node", []string{"chat"}, chatCommits.Add
	zaphodCfg.Redis, zaphodCfg.NodeID, zaphodCfg.Engines, zaphodCfg.OnCommit = srv.Client(t), "zaphod-node", []string{"zaphod"}, zaphodCommits.Add
	c := startNode(t, chatCfg) // alone at first: the zaphod process waits for a node of its kind
	ctx := context.Background()
	chatRec, err := c.Create(ctx, NewProcess{Recipe: "default", Input: "Hello."})
	if err != nil {
		t.Fatal(err)
	}
	panelRec, err := c.Create(ctx, NewProcess{Recipe: "zaphod-panel", Input: "Ship on Friday?"})
	if err != nil {
		t.Fatal(err)
	}
	blocked := func(id string) func(store.Record) bool {
		return func(r store.Record) bool { return r.ID == id && r.Status.State == lifecycle.Blocked }
	}
	chatCommits.Wait(t, "the chat turn on the chat node", blocked(chatRec.ID))
	startNode(t, zaphodCfg)
	zaphodCommits.Wait(t, "the zaphod turn on the zaphod node", blocked(panelRec.ID))
	for _, r := range chatCommits.Records() {
		if r.ID == panelRec.ID {
			t.Errorf("the chat node committed a turn of the zaphod process")
		}
	}
	for _, r := range zaphodCommits.Records() {
		if r.ID == chatRec.ID {
			t.Errorf("the zaphod node committed a turn of the chat process")
		}
	}
}
