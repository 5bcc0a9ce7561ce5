package chat

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
)

func oneTurn(t *testing.T, r *recipes.Recipe, model llm.Model) Turn {
	t.Helper()
	return Turn{
		ID:     "t1",
		Recipe: r,
		Model:  model,
		Tools:  testRegistry(t, r),
		Inbox: []conversation.Event{
			conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "first"),
			conversation.NewInboxMessage("2-0", conversation.KindOperator, "operator:bo", "second"),
		},
	}
}

// The drained messages are made durable before the model is called, and
// every round that does not end the turn is checkpointed; the last round's
// events are left for the caller's commit.
func TestCheckpoints(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}}}
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "x"}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "done"}}}},
	}}}}
	model := scripted.New(script)
	turn := oneTurn(t, r, model)
	var batches [][]conversation.EventType
	var requestsAtFirst int
	out, err := (&Engine{}).Run(context.Background(), &turn, CheckpointFunc(func(_ context.Context, evs []conversation.Event) error {
		if len(batches) == 0 {
			requestsAtFirst = len(model.Requests())
		}
		var types []conversation.EventType
		for _, e := range evs {
			types = append(types, e.Type)
		}
		batches = append(batches, types)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if requestsAtFirst != 0 {
		t.Errorf("the model was called %d times before the drain was checkpointed", requestsAtFirst)
	}
	want := [][]conversation.EventType{
		{conversation.TypeTurnStart, conversation.TypeInboxMessage, conversation.TypeInboxMessage},
		{conversation.TypeToolCallRequest, conversation.TypeToolCallResponse},
	}
	if len(batches) != len(want) {
		t.Fatalf("checkpoints = %v, want %v", batches, want)
	}
	for i := range want {
		if len(batches[i]) != len(want[i]) {
			t.Fatalf("checkpoint %d = %v, want %v", i, batches[i], want[i])
		}
	}
	if len(out.Pending) != 2 || out.Next != lifecycle.AwaitUser || len(out.Events) != 7 {
		t.Errorf("outcome: %d pending, %d events, next %q", len(out.Pending), len(out.Events), out.Next)
	}
}

func TestCheckpointFailureAbortsTheTurn(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}}}
	lost := errors.New("lease lost")
	model := scripted.New(&scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{{Text: "hi"}}}}})
	turn := oneTurn(t, r, model)
	_, err := (&Engine{}).Run(context.Background(), &turn, CheckpointFunc(func(context.Context, []conversation.Event) error { return lost }))
	if !errors.Is(err, lost) {
		t.Fatalf("Run = %v, want the checkpoint error", err)
	}
	if n := len(model.Requests()); n != 0 {
		t.Errorf("the model was called %d times after the drain could not be checkpointed", n)
	}
}

// blockingModel answers only when its context ends.
type blockingModel struct{}

func (blockingModel) Generate(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		<-ctx.Done()
		yield(llm.Part{}, ctx.Err())
	}
}

func TestTurnTimeout(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}}, Limits: recipes.Limits{TurnTimeout: recipes.Duration(1)}}
	turn := oneTurn(t, r, blockingModel{})
	out, err := (&Engine{}).Run(context.Background(), &turn, CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	last := out.Events[len(out.Events)-1]
	if last.SystemNotice == nil || last.SystemNotice.Code != NoticeTimeout || out.Next != lifecycle.AwaitUser {
		t.Fatalf("last event %+v, next %q; want a turn_timeout notice and await_user", last, out.Next)
	}
}
