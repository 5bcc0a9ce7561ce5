package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	workerengine "github.com/engine-brain/brain/engines/worker"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/enginetest"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
	"github.com/engine-brain/brain/llm/provider"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/tools/toolset"
)

func oneTurn(t *testing.T, r *recipes.Recipe, model llm.Model) engines.Turn {
	t.Helper()
	return turnWith(r, model, testRegistry(t, r))
}

// turnWith is oneTurn with the tools of reg.
func turnWith(r *recipes.Recipe, model llm.Model, reg *tools.Registry) engines.Turn {
	return engines.Turn{
		ID:     "t1",
		Recipe: r,
		Model:  model,
		Tools:  reg,
		Current: []conversation.Event{
			conversation.NewTurnStart("wake"),
			conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "first"),
			conversation.NewInboxMessage("2-0", conversation.KindOperator, "operator:bo", "second"),
		},
	}
}

// A tool round is made durable in steps — the requests before any tool
// runs, then every result — so that a node that stops midway never runs a
// finished tool twice; the last round's events are left for the caller's
// commit.
func TestCheckpoints(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}}}
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "x"}}, {Name: "lookup", Args: map[string]any{"query": "y"}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "done"}}}},
	}}}}
	turn := oneTurn(t, r, scripted.New(script))
	var batches [][]conversation.EventType
	out, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(_ context.Context, evs []conversation.Event) error {
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
	want := [][]conversation.EventType{
		{conversation.TypeToolCallRequest, conversation.TypeToolCallRequest},
		{conversation.TypeToolCallResponse},
		{conversation.TypeToolCallResponse},
	}
	if diff := cmp.Diff(want, batches); diff != "" {
		t.Errorf("checkpoints (-want +got):\n%s", diff)
	}
	if len(out.Pending) != 2 || out.Next != lifecycle.AwaitUser || len(out.Events) != 9 {
		t.Errorf("outcome: %d pending, %d events, next %q", len(out.Pending), len(out.Events), out.Next)
	}
}

// A resumed turn never runs a tool whose result was committed; a call left
// without a result gets the orphan result and the turn goes on.
func TestResumeAfterAStoppedNode(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}, {Name: "boom"}},
		Validation: recipes.Validation{Enabled: new(true)}}
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{}, // played by the node that stopped: corrected
		{Calls: []scripted.Call{{Name: "lookup"}, {Name: "boom"}}}, // played by the node that stopped
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "recovered"}}}},
	}}}}
	model := scripted.New(script)
	turn := oneTurn(t, r, model)
	// What the stopped node committed: a correction of an empty answer, both
	// requests, lookup's result; boom had started but its result was never
	// saved.
	req := func(id, name string) conversation.Event {
		return conversation.NewToolCallRequest(id, name, []byte(`{"query":"x"}`))
	}
	turn.Current = append(turn.Current,
		conversation.NewValidationCorrection("no_tool_call", 1, "call a tool"),
		req("call_1_1_1", "lookup"), req("call_1_1_2", "boom"),
		conversation.NewToolCallResponse("call_1_1_1", "lookup", []conversation.Block{conversation.TextBlock("data")}, false),
	)
	out, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if out.Next != lifecycle.AwaitUser {
		t.Fatalf("next = %q, want await_user", out.Next)
	}
	var results []string
	for _, e := range out.Events {
		if c := e.ToolCallResponse; c != nil {
			results = append(results, c.Name+": "+conversation.TextOf(c.Content))
		}
	}
	want := []string{
		"lookup: data",
		"boom: " + rounds.OrphanedCallError, // boom is not run again: it would have panicked
		"respond: recovered\nReply delivered to the user.",
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("model called %d times on resume, want 1", n)
	}
}

// keyedRecipe returns a recipe with respond, lookup and keyed, an
// idempotent tool that appends the call key it runs under to *keys and
// answers with it, and its registry.
func keyedRecipe(t *testing.T, keys *[]string) (*recipes.Recipe, *tools.Registry) {
	t.Helper()
	keyed := tools.Func{
		Def: tools.Definition{Name: "keyed", Description: "Acts once per call key.", Schema: json.RawMessage(`{"type":"object"}`), Idempotent: true},
		Fn: func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
			c, _ := tools.CallerFrom(ctx)
			*keys = append(*keys, c.CallKey)
			return tools.TextResult("done under " + c.CallKey), nil
		},
	}
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}, {Name: "keyed"}}}
	catalog := tools.BuiltinCatalog()
	for _, tool := range []tools.Tool{enginetest.Lookup, keyed} {
		catalog[tool.Definition().Name] = func(map[string]any) (tools.Tool, error) { return tool, nil }
	}
	reg, err := toolset.Build(catalog, r)
	if err != nil {
		t.Fatal(err)
	}
	return r, reg
}

// A turn resumed twice gives each call the key it had when it first ran:
// a call made after the first resume, left without a result by a second
// stop, runs again under its own key.
func TestResumeTwiceKeepsCallKeys(t *testing.T) {
	t.Parallel()
	var keys []string
	r, reg := keyedRecipe(t, &keys)
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "x"}}}},
		{Calls: []scripted.Call{{Name: "keyed"}}},
		{Calls: []scripted.Call{{Name: "keyed"}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "done"}}}},
	}}}}
	ctx := tools.WithCaller(context.Background(), tools.Caller{ProcessID: "p1", TurnID: "t1"})
	// run plays the turn from current; its node stops before the result
	// of the keyed call stop is saved ("": it does not stop).
	run := func(current []conversation.Event, stop string) []conversation.Event {
		t.Helper()
		turn := turnWith(r, scripted.New(script), reg)
		turn.Current = append(turn.Current, current...)
		saved := current
		_, err := (&Engine{}).Run(ctx, &turn, engines.CheckpointFunc(func(_ context.Context, evs []conversation.Event) error {
			if slices.ContainsFunc(evs, func(e conversation.Event) bool {
				return e.ToolCallResponse != nil && e.ToolCallResponse.CallID == stop
			}) {
				return errors.New("the node stopped")
			}
			saved = append(saved, evs...)
			return nil
		}))
		if (err != nil) != (stop != "") {
			t.Fatalf("run stopping at %q: %v", stop, err)
		}
		return saved
	}
	saved := run(nil, "call_1_2_1")  // the first keyed call
	saved = run(saved, "call_1_3_1") // resumed: the first again, then the second
	run(saved, "")                   // resumed: the second again, then respond
	if want := []string{"t1/1", "t1/1", "t1/2", "t1/2"}; !slices.Equal(keys, want) {
		t.Errorf("keys = %q, want %q", keys, want)
	}
}

// A call of an idempotent tool that a stopped node left without a result
// is run again when the turn resumes, with the call key the first run had,
// and the model gets the tool's answer, not the orphan result.
func TestResumeRunsAnIdempotentCallAgain(t *testing.T) {
	t.Parallel()
	var keys []string
	r, reg := keyedRecipe(t, &keys)
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "x"}}}},
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "y"}}, {Name: "keyed"}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "done"}}}},
	}}}}
	ctx := tools.WithCaller(context.Background(), tools.Caller{ProcessID: "p1", TurnID: "t1"})

	// The first node: keyed runs, then the node stops before its result
	// is saved.
	first := turnWith(r, scripted.New(script), reg)
	var saved []conversation.Event
	_, err := (&Engine{}).Run(ctx, &first, engines.CheckpointFunc(func(_ context.Context, evs []conversation.Event) error {
		if slices.ContainsFunc(evs, func(e conversation.Event) bool {
			return e.ToolCallResponse != nil && e.ToolCallResponse.Name == "keyed"
		}) {
			return errors.New("the node stopped")
		}
		saved = append(saved, evs...)
		return nil
	}))
	if err == nil || !slices.Equal(keys, []string{"t1/2"}) {
		t.Fatalf("first run: %v, keys %q; want the stop after keyed ran once under t1/2 (the turn's third request)", err, keys)
	}

	// The turn resumed from what was saved: keyed runs again, under the
	// same key, and its answer is the result.
	resumed := turnWith(r, scripted.New(script), reg)
	resumed.Current = append(resumed.Current, saved...)
	out, err := (&Engine{}).Run(ctx, &resumed, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"t1/2", "t1/2"}) {
		t.Errorf("keys = %q; want keyed run again under t1/2", keys)
	}
	var results []string
	for _, e := range out.Events {
		if c := e.ToolCallResponse; c != nil {
			results = append(results, c.Name+": "+conversation.TextOf(c.Content))
		}
	}
	if want := []string{"lookup: data about x", "lookup: data about y", "keyed: done under t1/2",
		"respond: done\nReply delivered to the user."}; !slices.Equal(results, want) {
		t.Errorf("results of the resumed turn = %q, want %q", results, want)
	}
}

func TestCheckpointFailureAbortsTheTurn(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}}}
	lost := errors.New("lease lost")
	model := scripted.New(&scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "a"}}, {Name: "respond", Args: map[string]any{"message": "b"}}}},
	}}}})
	turn := oneTurn(t, r, model)
	_, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return lost }))
	if !errors.Is(err, lost) {
		t.Fatalf("Run = %v, want the checkpoint error", err)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("the model was called %d times, want once before the failed checkpoint", n)
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
	out, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	last := out.Events[len(out.Events)-1]
	if last.SystemNotice == nil || last.SystemNotice.Code != rounds.NoticeTimeout || out.Next != lifecycle.AwaitUser {
		t.Fatalf("last event %+v, next %q; want a turn_timeout notice and await_user", last, out.Next)
	}
}

// Calls that are harmless to run again (tell_user here) are saved with
// their results in one step: one checkpoint per round instead of one per
// call plus one for the requests.
func TestReplayableRoundIsOneCheckpoint(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "tell_user"}}}
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "tell_user", Args: map[string]any{"message": "a"}}, {Name: "tell_user", Args: map[string]any{"message": "b"}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "done"}}}},
	}}}}
	turn := oneTurn(t, r, scripted.New(script))
	var batches [][]conversation.EventType
	if _, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(_ context.Context, evs []conversation.Event) error {
		var types []conversation.EventType
		for _, e := range evs {
			types = append(types, e.Type)
		}
		batches = append(batches, types)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	want := [][]conversation.EventType{{
		conversation.TypeToolCallRequest, conversation.TypeToolCallRequest,
		conversation.TypeToolCallResponse, conversation.TypeToolCallResponse,
	}}
	if diff := cmp.Diff(want, batches); diff != "" {
		t.Errorf("checkpoints (-want +got):\n%s", diff)
	}
}

// TestHistoryView checks that a turn given its history's provider view
// shows the model what it shows when it views the whole log, and that what
// a call was shown stays as it was while the turn goes on.
func TestHistoryView(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{
		Name:       "view",
		Tools:      []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}},
		Validation: recipes.Validation{Enabled: new(true)},
	}
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Text: "Looking.", Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "orders"}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "There are 3 open orders."}}}},
	}}}}
	requests := func(view func([]conversation.Event) []conversation.Message) []llm.Request {
		model := scripted.New(script)
		shown := &shownModel{Model: model}
		turn := engines.Turn{
			ID: "t1", Recipe: r, Model: shown, Tools: testRegistry(t, r),
			History: history(7), // ends inside an exchange
			Current: []conversation.Event{
				conversation.NewTurnStart("wake"),
				conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "How many open orders?"),
			},
		}
		if view != nil {
			turn.HistoryView = view(turn.History)
		}
		var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
		if _, err := (&Engine{}).Run(context.Background(), &turn, discard); err != nil {
			t.Fatal(err)
		}
		for i, req := range model.Requests() {
			if got, _ := json.Marshal(req.Messages); string(got) != shown.json[i] {
				t.Errorf("call %d: what the model was shown changed after the call:\nthen %s\nnow  %s", i+1, shown.json[i], got)
			}
		}
		return model.Requests()
	}
	whole, kept := requests(nil), requests(conversation.ProviderView)
	if len(whole) != 2 {
		t.Fatalf("%d model calls, want 2", len(whole))
	}
	if diff := cmp.Diff(whole, kept, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("requests (-whole log viewed +history view kept):\n%s", diff)
	}
	// The view given is what is shown, not the history converted again.
	marked := requests(func(h []conversation.Event) []conversation.Message {
		v := conversation.ProviderView(h)
		v[0].Content = []conversation.Block{conversation.TextBlock("from the kept view")}
		return v
	})
	for i, req := range marked {
		if got := req.Messages[0].Text(); got != "from the kept view" {
			t.Errorf("request %d begins with %q, not the kept view's first message", i+1, got)
		}
	}
}

// TestHistoryTokens checks that a turn takes the token count of the history
// view it is given rather than counting the whole view again: told the view
// is small, it does not cut a view over its window; told nothing, it counts
// and cuts.
func TestHistoryTokens(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "tokens", Tools: []recipes.ToolRef{{Name: "respond"}}}
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "Done."}}}},
	}}}}
	hist := history(30)
	view := conversation.ProviderView(hist)
	shown := func(tokens int) int {
		model := scripted.New(script)
		turn := engines.Turn{
			ID: "t1", Recipe: r, Model: model, Tools: testRegistry(t, r),
			History: hist, HistoryView: view, HistoryTokens: tokens,
			ContextTokens: conversation.ViewTokens(view) / 2,
			Current: []conversation.Event{
				conversation.NewTurnStart("wake"),
				conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "And now?"),
			},
		}
		var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
		if _, err := (&Engine{}).Run(context.Background(), &turn, discard); err != nil {
			t.Fatal(err)
		}
		return len(model.Requests()[0].Messages)
	}
	counted, told := shown(0), shown(1)
	if counted > len(view) {
		t.Errorf("counting the view itself, the turn showed %d messages, want it cut below the view's %d", counted, len(view))
	}
	if told <= len(view) {
		t.Errorf("told the view counts 1 token, the turn showed %d messages, want the whole view (%d) and the turn's", told, len(view))
	}
}

// A turn whose history omits the log's oldest events shows the model, in
// every call, the view it would show otherwise with conversation.
// OmittedNote before the first message, without writing to the history
// view it was given.
func TestHistoryOmitted(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "omitted", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}}}
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "orders"}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "There are 3 open orders."}}}},
	}}}}
	requests := func(omitted bool, view []conversation.Message) []llm.Request {
		model := scripted.New(script)
		turn := engines.Turn{
			ID: "t1", Recipe: r, Model: model, Tools: testRegistry(t, r),
			History: lookupHistory(2), HistoryView: view, HistoryOmitted: omitted,
			Current: []conversation.Event{
				conversation.NewTurnStart("wake"),
				conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "How many open orders?"),
			},
		}
		var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
		if _, err := (&Engine{}).Run(context.Background(), &turn, discard); err != nil {
			t.Fatal(err)
		}
		return model.Requests()
	}
	whole := requests(false, nil)
	given := conversation.ProviderView(lookupHistory(2))
	firstGiven := given[0].Text()
	for _, view := range [][]conversation.Message{nil, given} {
		got := requests(true, view)
		if len(got) != len(whole) {
			t.Fatalf("%d calls, want %d", len(got), len(whole))
		}
		for i := range got {
			msgs := got[i].Messages
			if len(msgs) == 0 || len(msgs[0].Content) == 0 || msgs[0].Content[0].Text != conversation.OmittedNote {
				t.Fatalf("call %d (view given: %v) does not begin with the omitted note", i+1, view != nil)
			}
			first := msgs[0]
			first.Content = first.Content[1:]
			msgs = append([]conversation.Message{first}, msgs[1:]...)
			if diff := cmp.Diff(whole[i].Messages, msgs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("call %d (view given: %v), but for the note (-not omitted +omitted):\n%s", i+1, view != nil, diff)
			}
		}
	}
	if given[0].Text() != firstGiven {
		t.Errorf("the history view given was written to: its first message is now %q", given[0].Text())
	}
}

// shownModel notes the JSON of the messages each call shows its model, as
// they are when the call is made.
type shownModel struct {
	llm.Model
	json []string
}

func (m *shownModel) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	b, _ := json.Marshal(req.Messages)
	m.json = append(m.json, string(b))
	return m.Model.Generate(ctx, req)
}

// lookupHistory is a log of n earlier exchanges, each a question, a lookup
// whose result is about 1,000 tokens, and an answer.
func lookupHistory(n int) []conversation.Event {
	var hist []conversation.Event
	for i := range n {
		id := fmt.Sprintf("h%d", i)
		hist = append(hist,
			conversation.NewInboxMessage(id, conversation.KindUser, "user:ada", "an earlier question"),
			conversation.NewToolCallRequest(id+"-lookup", "lookup", []byte(`{"query":"orders"}`)),
			conversation.NewToolCallResponse(id+"-lookup", "lookup", []conversation.Block{conversation.TextBlock(strings.Repeat("order ", 500))}, false),
			conversation.NewToolCallRequest(id, "respond", []byte(`{"message":"an earlier answer"}`)),
			conversation.NewToolCallResponse(id, "respond", tools.RespondResult(tools.RespondArgs{Message: "an earlier answer", AwaitingUserInput: true}).Content, false),
		)
	}
	return hist
}

// A conversation longer than limits.max_context_tokens is shown to the
// model cut to it (conversation.Fit), in every round, and the outcome
// counts those rounds; the log keeps everything.
func TestContextBound(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{
		Name:       "bounded",
		Tools:      []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}},
		Limits:     recipes.Limits{MaxContextTokens: 1000},
		Validation: recipes.Validation{Enabled: new(false)}, // its rounds answer in free text
	}
	hist := lookupHistory(3)
	script := &scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "orders", "size": 600}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "There are 3 open orders."}}}},
	}}}}
	model := scripted.New(script)
	turn := engines.Turn{
		ID: "t1", Recipe: r, Model: llmtest.WithUsage{Model: model, In: 900, Out: 10}, Tools: testRegistry(t, r), History: hist,
		Current: []conversation.Event{
			conversation.NewTurnStart("wake"),
			conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", "How many open orders?"),
		},
	}
	var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
	out, err := (&Engine{}).Run(context.Background(), &turn, discard)
	if err != nil {
		t.Fatal(err)
	}
	if out.Fitted != 2 {
		t.Errorf("Outcome.Fitted = %d, want 2 (both rounds)", out.Fitted)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	log := append(append([]conversation.Event(nil), hist...), out.Events...)
	for i, req := range reqs {
		size := 0
		for j := range req.Messages {
			size += conversation.EstimateTokens(&req.Messages[j])
		}
		if size > 1000 {
			t.Errorf("request %d is estimated at %d tokens, over limits.max_context_tokens (1000)", i+1, size)
		}
		if got := req.Messages[0].Text(); !strings.Contains(got, "an earlier question") || len(req.Messages) < 3 {
			t.Errorf("request %d starts with %q (%d messages): the earlier exchanges should stay, their results cleared", i+1, got, len(req.Messages))
		}
		// The view of the whole log up to this round, fitted: the model
		// sees what the turn's log says, cut, and nothing else.
		whole := conversation.ProviderView(log[:len(hist)+len(turn.Current)+3*i])
		if want, _ := conversation.Fit(whole, 1000); !cmp.Equal(want, req.Messages, cmpopts.EquateEmpty()) {
			t.Errorf("request %d (-fitted view of the log +sent):\n%s", i+1, cmp.Diff(want, req.Messages, cmpopts.EquateEmpty()))
		}
	}
	// Each call's usage says what it was not shown.
	var usages []conversation.ModelUsage
	for _, e := range out.Events {
		if e.ModelUsage != nil {
			usages = append(usages, *e.ModelUsage)
		}
	}
	if len(usages) != 2 {
		t.Fatalf("%d model_usage events, want 2", len(usages))
	}
	for i, u := range usages {
		_, fit := conversation.Fit(conversation.ProviderView(log[:len(hist)+len(turn.Current)+3*i]), 1000)
		if u.ClearedResults != fit.Cleared || u.DroppedMessages != fit.Dropped || !fit.Fitted() {
			t.Errorf("call %d's usage says %d results cleared, %d messages dropped; Fit says %+v", i+1, u.ClearedResults, u.DroppedMessages, fit)
		}
	}
	// What the model has just asked for is never cut.
	if got := reqs[1].Messages[len(reqs[1].Messages)-1]; got.Role != conversation.MessageTool || len(got.Text()) != 600 {
		t.Errorf("the second round ends with %s %.40q: want the 600 characters the lookup just returned", got.Role, got.Text())
	}
}

// narrow is a model whose provider refuses, as too long for its context
// window, a request estimated above window tokens; calls records the
// estimate of every request, refused or not.
type narrow struct {
	llm.Model
	window int
	calls  []int
}

func (m *narrow) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	size := conversation.ViewTokens(req.Messages)
	m.calls = append(m.calls, size)
	if size > m.window {
		return func(yield func(llm.Part, error) bool) {
			yield(llm.Part{}, &provider.Error{Provider: "test", Kind: provider.ErrBadRequest, StatusCode: 400,
				Message: fmt.Sprintf("prompt is too long: %d tokens > %d maximum", size, m.window), ContextTooLong: true})
		}
	}
	return m.Model.Generate(ctx, req)
}

// A provider that refuses the conversation as too long for the model's
// window (the recipe's bound is above it) is asked again with half as much
// shown, and the rest of the turn keeps to that; when nothing older is
// left to leave out, or after rounds.MaxContextShrinks, the turn ends with a
// notice that says what to do.
func TestContextRefusedShowsLess(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "wide", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}}, // the default 100,000 tokens
		Validation: recipes.Validation{Enabled: new(false)}} // its answer is free text
	hist := lookupHistory(3)
	answer := func() *scripted.Model {
		return scripted.New(&scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
			{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "orders", "size": 600}}}},
			{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "There are 3 open orders."}}}},
		}}}})
	}
	run := func(t *testing.T, model llm.Model, history []conversation.Event, question string) engines.Outcome {
		t.Helper()
		turn := engines.Turn{
			ID: "t1", Recipe: r, Model: model, Tools: testRegistry(t, r), History: history,
			Current: []conversation.Event{
				conversation.NewTurnStart("wake"),
				conversation.NewInboxMessage("1-0", conversation.KindUser, "user:ada", question),
			},
		}
		var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
		out, err := (&Engine{}).Run(context.Background(), &turn, discard)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	notice := func(out engines.Outcome) *conversation.SystemNotice {
		for _, e := range out.Events {
			if e.SystemNotice != nil {
				return e.SystemNotice
			}
		}
		return nil
	}

	t.Run("shown less, the turn answers", func(t *testing.T) {
		t.Parallel()
		m := &narrow{Model: answer(), window: 1200}
		out := run(t, m, hist, "How many open orders?")
		if out.Next != lifecycle.AwaitUser || notice(out) != nil {
			t.Fatalf("turn ended %s with notice %+v; want it answered", out.Next, notice(out))
		}
		if out.TooLong == 0 || out.TooLong > rounds.MaxContextShrinks {
			t.Errorf("Outcome.TooLong = %d, want 1 … %d", out.TooLong, rounds.MaxContextShrinks)
		}
		// Each refused call halves the bound: the next is at most half the
		// refused one; once accepted, the turn's next round keeps within it.
		for i := 1; i < len(m.calls); i++ {
			if m.calls[i-1] > m.window && m.calls[i] > m.calls[i-1]/2 {
				t.Errorf("call %d is estimated at %d tokens after a refusal at %d: want at most half", i+1, m.calls[i], m.calls[i-1])
			}
		}
		if n := len(m.calls); n != out.TooLong+2 || m.calls[n-1] > m.window || m.calls[n-2] > m.window {
			t.Errorf("calls = %v (window %d), want %d refused, then both rounds accepted", m.calls, m.window, out.TooLong)
		}
	})
	t.Run("nothing older to leave out", func(t *testing.T) {
		t.Parallel()
		m := &narrow{Model: answer(), window: 1200}
		out := run(t, m, nil, strings.Repeat("a long question ", 300)) // ~1,600 tokens on its own
		if len(m.calls) != 1 || out.TooLong != 1 {
			t.Errorf("calls = %v, TooLong = %d; want one refused call, not asked again (it would be the same)", m.calls, out.TooLong)
		}
		if n := notice(out); n == nil || n.Code != rounds.NoticeModelError || !strings.Contains(n.Text, "too long for the model's context window") ||
			!strings.Contains(n.Text, "prompt is too long") {
			t.Errorf("notice = %+v, want a model_error saying the conversation is too long and what the provider said", n)
		}
		if out.Next != lifecycle.AwaitUser {
			t.Errorf("Next = %s, want await_user: the next message may be shorter", out.Next)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		m := &narrow{Model: answer(), window: 10} // refuses everything
		out := run(t, m, hist, "How many open orders?")
		if len(m.calls) != rounds.MaxContextShrinks+1 || out.TooLong != rounds.MaxContextShrinks+1 {
			t.Errorf("%d calls, TooLong = %d; want %d: one, then rounds.MaxContextShrinks more", len(m.calls), out.TooLong, rounds.MaxContextShrinks+1)
		}
		if n := notice(out); n == nil || n.Code != rounds.NoticeModelError {
			t.Errorf("notice = %+v, want a model_error", n)
		}
	})
}

// lookups is a model that calls lookup three times, then responds: a turn
// that spends what its usage says at each call.
func lookups() *scripted.Model {
	return scripted.New(&scripted.Script{Turns: []scripted.Turn{{Rounds: []scripted.Round{
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "a"}}}},
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "b"}}}},
		{Calls: []scripted.Call{{Name: "lookup", Args: map[string]any{"query": "c"}}}},
		{Calls: []scripted.Call{{Name: "respond", Args: map[string]any{"message": "done"}}}},
	}}}})
}

// budgetCases are turns of lookups against a 2,000-token budget, each call
// using 910 tokens: what the budget had used before the turn, whether the
// turn is a worker's, and how many calls it makes.
var budgetCases = []struct {
	name   string
	before int64
	worker bool
	calls  int
}{
	{"spent midway", 0, false, 3}, // 2,730 after three calls
	{"spent before", 1990, false, 1},
	{"spent already", 2000, false, 0},
	{"a worker", 0, true, 3},
}

// A process whose model calls have used its recipe's limits.max_tokens
// makes no more calls: the turn fails with a notice (a worker's with a
// failed result for its parent), counting what earlier turns used.
func TestTokenBudget(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "frugal", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}, {Name: "finish_task"}},
		Limits: recipes.Limits{MaxTokens: 2000}}
	for _, tt := range budgetCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model := lookups()
			turn := oneTurn(t, r, llmtest.WithUsage{Model: model, In: 900, Out: 10})
			turn.TokensUsed = tt.before
			var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
			out, err := engineFor(tt.worker, nil).Run(context.Background(), &turn, discard)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(model.Requests()); n != tt.calls {
				t.Errorf("%d model calls, want %d", n, tt.calls)
			}
			last := out.Events[len(out.Events)-1].SystemNotice
			if out.Next != lifecycle.Fail || last == nil || last.Code != rounds.NoticeTokenBudget || !strings.Contains(last.Text, "limits.max_tokens (2000)") {
				t.Fatalf("turn ended %s with %+v; want fail with a token_budget notice", out.Next, last)
			}
			if tt.worker != (out.Finish != nil && out.Finish.Status == tools.FinishFailed && out.Finish.Result == last.Text) {
				t.Errorf("Finish = %+v; a worker's parent is told, with the notice", out.Finish)
			}
		})
	}
}

// A process whose model calls have used its recipe's
// limits.max_tokens_per_day today makes no more calls: the turn ends READY
// (a worker's too) with a notice, and asks to be woken when the next UTC
// day begins; what earlier turns used today counts, and the lifetime cap
// is not touched.
func TestDayTokenBudget(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "daily", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "lookup"}},
		Limits: recipes.Limits{MaxTokensPerDay: 2000, MaxTokens: 1_000_000}}
	now := time.Date(2026, 3, 14, 22, 30, 0, 0, time.UTC)
	midnight := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	for _, tt := range budgetCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model := lookups()
			turn := oneTurn(t, r, llmtest.WithUsage{Model: model, In: 900, Out: 10})
			turn.TokensToday, turn.TokensUsed = tt.before, 500_000
			var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
			out, err := engineFor(tt.worker, func() time.Time { return now }).Run(context.Background(), &turn, discard)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(model.Requests()); n != tt.calls {
				t.Errorf("%d model calls, want %d", n, tt.calls)
			}
			last := out.Events[len(out.Events)-1].SystemNotice
			if out.Next != lifecycle.Continue || last == nil || last.Code != rounds.NoticeDayTokenBudget ||
				!strings.Contains(last.Text, "limits.max_tokens_per_day (2000)") || !strings.Contains(last.Text, "2026-03-15T00:00:00Z") {
				t.Fatalf("turn ended %s with %+v; want continue with a day_token_budget notice", out.Next, last)
			}
			if !out.ResumeAt.Equal(midnight) || out.Finish != nil {
				t.Errorf("ResumeAt %s, Finish %+v; want %s and no result", out.ResumeAt, out.Finish, midnight)
			}
		})
	}
	// A turn within the day's budget asks for no wake.
	model := lookups()
	turn := oneTurn(t, r, llmtest.WithUsage{Model: model, In: 100, Out: 10})
	var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
	if out, err := (&Engine{}).Run(context.Background(), &turn, discard); err != nil || !out.ResumeAt.IsZero() || out.Next != lifecycle.AwaitUser {
		t.Errorf("a turn within the budget: %s, ResumeAt %s, %v; want await_user and no ResumeAt", out.Next, out.ResumeAt, err)
	}
}

// engineFor returns the worker engine when worker is set, else the chat
// engine, stamped by clock: the loop tests run on both.
func engineFor(worker bool, clock func() time.Time) engines.Engine {
	if worker {
		return &workerengine.Engine{Clock: clock}
	}
	return &Engine{Clock: clock}
}
