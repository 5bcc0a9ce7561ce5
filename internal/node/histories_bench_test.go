package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
)

// BenchmarkColdHistory measures what a turn's history costs a node that
// keeps none of the log (a process's turns land on many nodes, or more
// processes run than a node keeps logs of): the claim and the read back,
// for a model shown at most 2,000 tokens. Logs of 1,000 and 20,000 events
// cost alike: only the newest part a model call needs is read.
func BenchmarkColdHistory(b *testing.B) {
	const window = 2000
	for _, events := range []int{1_000, 20_000} {
		b.Run(fmt.Sprint("log=", events), func(b *testing.B) {
			ctx := context.Background()
			n, err := New(Config{Redis: testutil.Redis(b), Models: map[string]llm.Model{"default": nodetest.Script(b, "turns: [{rounds: [{text: unused}]}]")},
				Recipes: testRecipes(b), HistoryCache: -1})
			if err != nil {
				b.Fatal(err)
			}
			st := n.Store()
			rec, err := n.Create(ctx, NewProcess{Recipe: "default", Input: "question"})
			if err != nil {
				b.Fatal(err)
			}
			// answer is a turn's answer: about 40 tokens.
			answer := func(id string) []conversation.Event {
				return []conversation.Event{
					conversation.NewToolCallRequest(id, "respond", []byte(`{"message":"an earlier answer, in a few more words than the question took"}`)),
					conversation.NewToolCallResponse(id, "respond", []conversation.Block{conversation.TextBlock("Reply delivered to the user.")}, false),
				}
			}
			turn := func() {
				ws, err := st.ReadWakes(ctx, "n", []string{"chat"}, 1, time.Millisecond)
				if err != nil || len(ws) != 1 {
					b.Fatalf("ReadWakes = %v, %v; want the process's wake", ws, err)
				}
				claim, err := st.ClaimAfter(ctx, ws[0], "n", "", "", nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := n.turnHistory(ctx, claim, nil, window); err != nil {
					b.Fatal(err)
				}
				if _, err := st.Commit(ctx, claim, answer(claim.TurnID), lifecycle.AwaitUser, "model", nil); err != nil {
					b.Fatal(err)
				}
			}
			// The log: the first turn's checkpoints hold earlier exchanges
			// of five events each, about 60 tokens.
			ws, _ := st.ReadWakes(ctx, "n", []string{"chat"}, 1, time.Millisecond)
			claim, err := st.ClaimAfter(ctx, ws[0], "n", "", "", nil)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < events; i += 500 {
				var evs []conversation.Event
				for j := i; j < i+500; j += 5 {
					id := fmt.Sprint("c", j)
					evs = append(evs, conversation.NewTurnStart("wake"),
						conversation.NewInboxMessage(id, conversation.KindUser, "user:ada", "an earlier question"),
						conversation.NewSystemNotice("note", "an event the model is not shown"))
					evs = append(evs, answer(id)...)
				}
				if err := st.Checkpoint(ctx, claim, evs); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := st.Commit(ctx, claim, nil, lifecycle.AwaitUser, "model", nil); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := n.Send(ctx, rec.ID, "user:ada", "and now?", ""); err != nil {
					b.Fatal(err)
				}
				turn()
			}
		})
	}
}
