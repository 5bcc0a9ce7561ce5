package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// callModel answers the n-th call of a turn with the n-th list of parts, then
// the n-th error (nil: none).
type callModel struct {
	parts [][]llm.Part
	errs  []error
	n     *int
	reqs  *[]*llm.Request // when set, the requests are recorded
}

func (m callModel) Generate(_ context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	i := *m.n
	*m.n++
	if m.reqs != nil {
		*m.reqs = append(*m.reqs, req)
	}
	return func(yield func(llm.Part, error) bool) {
		for _, p := range m.parts[i] {
			if !yield(p, nil) {
				return
			}
		}
		if i < len(m.errs) && m.errs[i] != nil {
			yield(llm.Part{}, m.errs[i])
		}
	}
}

func respondCall(message string) llm.Part {
	args, _ := json.Marshal(map[string]any{"message": message, "awaiting_user_input": true})
	return llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "c1", Name: tools.Respond, Arguments: args}}
}

var (
	searchStarted = conversation.HostedActivity{ActivityID: "ws1", Name: "web_search", State: conversation.ActivityStarted, Input: json.RawMessage(`{"query":"brain"}`)}
	searchDone    = conversation.HostedActivity{ActivityID: "ws1", Name: "web_search", State: conversation.ActivityCompleted, Summary: "2 results"}
	citeA         = conversation.Citation{Source: conversation.Source{URL: "https://a.test", Title: "A"}, Range: &conversation.Range{Start: 0, End: 5}}
	citeB         = conversation.Citation{Source: conversation.Source{URL: "https://b.test"}, Excerpt: "runs agents"}
)

// A hosted search and the text that cites it become events of the round;
// the turn's answer, delivered by respond, carries the sources (without the
// ranges, which addressed the model's own text); usage is one event.
func TestHostedActivityAndCitationsReachTheAnswer(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}}, Model: recipes.Model{Name: "m1"}}
	n := 0
	model := callModel{n: &n, parts: [][]llm.Part{{
		{Kind: llm.PartHosted, Hosted: &searchStarted},
		{Kind: llm.PartHosted, Hosted: &searchDone},
		{Kind: llm.PartText, Text: "Brain runs agents."},
		{Kind: llm.PartCitation, Citation: &citeA},
		{Kind: llm.PartCitation, Citation: &citeB},
		{Kind: llm.PartCitation, Citation: &citeA},
		respondCall("Brain runs agents, say A and B."),
		{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: 120, OutputTokens: 30, Hosted: map[string]int{"web_search": 1}}},
		{Kind: llm.PartFinish, Finish: llm.FinishToolCalls},
	}}}
	turn := oneTurn(t, r, model)
	out, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if out.Next != lifecycle.AwaitUser {
		t.Fatalf("next %q, want await_user", out.Next)
	}
	evs := out.Events[len(turn.Current):]
	var types []conversation.EventType
	for _, e := range evs {
		types = append(types, e.Type)
	}
	wantTypes := []conversation.EventType{
		conversation.TypeModelUsage, conversation.TypeHostedActivity, conversation.TypeHostedActivity,
		conversation.TypeChatResponse, conversation.TypeToolCallRequest, conversation.TypeToolCallResponse,
	}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Fatalf("event types (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(conversation.ModelUsage{Model: "m1", InputTokens: 120, OutputTokens: 30}, *evs[0].ModelUsage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if evs[1].HostedActivity.State != conversation.ActivityStarted || evs[2].HostedActivity.State != conversation.ActivityCompleted {
		t.Errorf("hosted states %q, %q; want started, completed", evs[1].HostedActivity.State, evs[2].HostedActivity.State)
	}
	if got := evs[3].ChatResponse.Citations; len(got) != 3 || got[0].Range == nil {
		t.Errorf("the model's text keeps its citations as they came: %+v", got)
	}
	answer := evs[5].ToolCallResponse
	want := []conversation.Citation{{Source: citeA.Source}, citeB}
	if diff := cmp.Diff(want, answer.Citations); diff != "" {
		t.Errorf("sources of the delivered answer (-want +got):\n%s", diff)
	}
	user := conversation.UserView(out.Events)
	last := user[len(user)-1].ToolCallResponse
	if last == nil || len(last.Citations) != 2 {
		t.Errorf("the user view's answer lacks its sources: %+v", user[len(user)-1])
	}
}

// The next model call is shown a round's hosted activity and citations
// with the assistant message they belong to, placed in its text, so that
// the provider that ran the search can be sent it back.
func TestHostedActivityReachesTheNextRequest(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}, {Name: "tell_user"}}}
	n := 0
	var reqs []*llm.Request
	done := searchDone
	done.Payload = &conversation.ProviderPayload{Provider: "anthropic", Format: "web_search_tool_result", Version: "v1", Value: json.RawMessage(`{"type":"web_search_tool_result"}`)}
	cite := conversation.Citation{Source: citeA.Source, Range: &conversation.Range{Start: 13, End: 18}}
	tellUser, _ := json.Marshal(map[string]string{"message": "Found it."})
	model := callModel{n: &n, reqs: &reqs, parts: [][]llm.Part{
		{
			{Kind: llm.PartText, Text: "Let me look. "},
			{Kind: llm.PartHosted, Hosted: &searchStarted},
			{Kind: llm.PartHosted, Hosted: &done},
			{Kind: llm.PartText, Text: "Brain runs agents."},
			{Kind: llm.PartCitation, Citation: &cite},
			{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "c0", Name: tools.TellUser, Arguments: tellUser}},
		},
		{respondCall("Brain runs agents."), {Kind: llm.PartFinish, Finish: llm.FinishToolCalls}},
	}}
	turn := oneTurn(t, r, model)
	if _, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil })); err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	asked := msgs[len(msgs)-2]
	started, completed := searchStarted, done
	started.TextAt, completed.TextAt = 13, 13
	want := conversation.Message{
		Role:      conversation.MessageAssistant,
		Content:   []conversation.Block{conversation.TextBlock("Let me look. Brain runs agents.")},
		ToolCalls: []conversation.ToolCall{{ID: "c0", Name: tools.TellUser, Arguments: tellUser}},
		Hosted:    []conversation.HostedActivity{started, completed},
		Citations: []conversation.Citation{cite},
	}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("the round's assistant message in the next request (-want +got):\n%s", diff)
	}
}

// An answer cut midway keeps its text for the model, with the citations
// that arrived marked incomplete, and the round is asked again; the model
// is sent what it had written.
func TestCutAnswerIsAskedAgain(t *testing.T) {
	t.Parallel()
	r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}}}
	n := 0
	var reqs []*llm.Request
	cut := fmt.Errorf("openai: %w: stream cut", provider.ErrUnavailable)
	model := callModel{n: &n, reqs: &reqs, errs: []error{cut}, parts: [][]llm.Part{
		{
			{Kind: llm.PartHosted, Hosted: &searchStarted},
			{Kind: llm.PartText, Text: "Brain ru"},
			{Kind: llm.PartCitation, Citation: &citeB},
		},
		{respondCall("Brain runs agents."), {Kind: llm.PartFinish, Finish: llm.FinishToolCalls}},
	}}
	turn := oneTurn(t, r, model)
	out, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if out.Next != lifecycle.AwaitUser || n != 2 {
		t.Fatalf("next %q after %d model calls; want await_user after 2", out.Next, n)
	}
	evs := out.Events[len(turn.Current):]
	partial := evs[1].ChatResponse
	if evs[0].HostedActivity == nil || partial == nil || partial.Text != "Brain ru" || len(partial.Citations) != 1 ||
		!partial.Citations[0].Incomplete || partial.AddressedTo(conversation.RoleUser) {
		t.Fatalf("events %+v; want the hosted start, then the partial text for the assistant with its citation marked incomplete", evs[:2])
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != conversation.MessageAssistant || last.Text() != "Brain ru" {
		t.Errorf("the second request ends with %+v; want the partial answer", last)
	}
	if got := evs[len(evs)-1].ToolCallResponse; got == nil || len(got.Citations) != 1 || !got.Citations[0].Incomplete {
		t.Errorf("the delivered answer's sources: %+v; want the incomplete citation", evs[len(evs)-1])
	}
}

// Cut again and again, the turn ends with a notice after rounds.MaxCutRetries;
// a failure before any output (the adapter has retried it) ends it at once.
func TestCutsAreBounded(t *testing.T) {
	t.Parallel()
	cut := fmt.Errorf("openai: %w: stream cut", provider.ErrUnavailable)
	text := []llm.Part{{Kind: llm.PartText, Text: "Brain ru"}}
	for name, tc := range map[string]struct {
		parts [][]llm.Part
		calls int
	}{
		"cut every time":   {parts: [][]llm.Part{text, text, text, text}, calls: rounds.MaxCutRetries + 1},
		"no output at all": {parts: [][]llm.Part{nil, nil}, calls: 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}}}
			n := 0
			errs := make([]error, len(tc.parts))
			for i := range errs {
				errs[i] = cut
			}
			turn := oneTurn(t, r, callModel{n: &n, parts: tc.parts, errs: errs})
			out, err := (&Engine{}).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
			if err != nil {
				t.Fatal(err)
			}
			last := out.Events[len(out.Events)-1].SystemNotice
			if n != tc.calls || out.Next != lifecycle.AwaitUser || last == nil || last.Code != rounds.NoticeModelError {
				t.Errorf("%d model calls, next %q, last %+v; want %d calls, then a %s notice", n, out.Next, last, tc.calls, rounds.NoticeModelError)
			}
		})
	}
}

// A refused key, or provider data its adapter cannot send back, fails the
// process (an operator must act: fix the key, move the recipe to another
// provider); a worker's parent is told the task failed.
func TestUnhealableErrorsFailTheProcess(t *testing.T) {
	t.Parallel()
	failures := map[string]struct {
		err    error
		notice string
	}{
		"auth": {&provider.Error{Provider: "openai", Kind: provider.ErrAuth, StatusCode: 401, Message: "Incorrect API key"}, rounds.NoticeModelAuth},
		"payload": {provider.Unsendable("anthropic", "messages[1].hosted[1]: the web_search_tool_result payload does not decode"),
			rounds.NoticeModelPayload},
	}
	for name, f := range failures {
		for _, worker := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/worker=%v", name, worker), func(t *testing.T) {
				t.Parallel()
				r := &recipes.Recipe{Name: "t", Tools: []recipes.ToolRef{{Name: "respond"}}}
				n := 0
				turn := oneTurn(t, r, callModel{n: &n, parts: [][]llm.Part{nil}, errs: []error{f.err}})
				out, err := engineFor(worker, nil).Run(context.Background(), &turn, engines.CheckpointFunc(func(context.Context, []conversation.Event) error { return nil }))
				if err != nil {
					t.Fatal(err)
				}
				last := out.Events[len(out.Events)-1].SystemNotice
				if out.Next != lifecycle.Fail || last == nil || last.Code != f.notice {
					t.Fatalf("next %q, last event %+v; want fail after a %s notice", out.Next, out.Events[len(out.Events)-1], f.notice)
				}
				if !strings.Contains(last.Text, f.err.Error()) {
					t.Errorf("notice %q does not say what failed (%v)", last.Text, f.err)
				}
				if worker != (out.Finish != nil) || (worker && out.Finish.Status != tools.FinishFailed) {
					t.Errorf("finish %+v; a worker reports failed, a chat process nothing", out.Finish)
				}
			})
		}
	}
}

func TestWorkerSourcesReachTheParentsAnswer(t *testing.T) {
	t.Parallel()
	worker := &recipes.Recipe{Name: "w", Engine: recipes.EngineWorker, Tools: []recipes.ToolRef{{Name: "finish_task"}}}
	finish, _ := json.Marshal(map[string]any{"result": "Brain runs agents.", "status": "done"})
	n := 0
	model := callModel{n: &n, parts: [][]llm.Part{{
		{Kind: llm.PartText, Text: "Brain runs agents."},
		{Kind: llm.PartCitation, Citation: &citeA},
		{Kind: llm.PartCitation, Citation: &citeB},
		{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "f1", Name: tools.FinishTask, Arguments: finish}},
		{Kind: llm.PartFinish, Finish: llm.FinishToolCalls},
	}}}
	var discard engines.CheckpointFunc = func(context.Context, []conversation.Event) error { return nil }
	turn := oneTurn(t, worker, model)
	out, err := engineFor(true, nil).Run(context.Background(), &turn, discard)
	if err != nil {
		t.Fatal(err)
	}
	sources := []conversation.Citation{{Source: citeA.Source}, citeB}
	if out.Next != lifecycle.Finish || !cmp.Equal(sources, out.Cited) {
		t.Fatalf("the worker's turn ended %s citing %+v; want finish citing %+v", out.Next, out.Cited, sources)
	}
	if res := out.Events[len(out.Events)-1].ToolCallResponse; res == nil || res.Name != tools.FinishTask || !cmp.Equal(sources, res.Citations) {
		t.Errorf("the finish_task result is %+v, want one that cites %+v", res, sources)
	}

	report, _ := json.Marshal(conversation.ProcessEvent{Child: "p_w", Recipe: "w", Status: "done", Result: "Brain runs agents.",
		Sources: []conversation.Source{citeB.Source, {URL: "https://c.test", Title: "C"}}})
	parent := &recipes.Recipe{Name: "p", Tools: []recipes.ToolRef{{Name: "respond"}}}
	n = 0
	model = callModel{n: &n, parts: [][]llm.Part{{
		{Kind: llm.PartText, Text: "It runs agents."},
		{Kind: llm.PartCitation, Citation: &citeA},
		respondCall("It runs agents, says the worker."),
		{Kind: llm.PartFinish, Finish: llm.FinishToolCalls},
	}}}
	turn = oneTurn(t, parent, model)
	turn.Current = append(turn.Current[:1], conversation.NewInboxMessage("3-0", conversation.KindProcessEvent, "process:p_w", string(report)))
	if out, err = (&Engine{}).Run(context.Background(), &turn, discard); err != nil {
		t.Fatal(err)
	}
	answer := out.Events[len(out.Events)-1].ToolCallResponse
	want := []conversation.Citation{{Source: citeB.Source}, {Source: conversation.Source{URL: "https://c.test", Title: "C"}}, {Source: citeA.Source}}
	if answer == nil || !cmp.Equal(want, answer.Citations) {
		t.Errorf("the parent's answer is %+v, want one that cites %+v (the worker's sources, then its own)", answer, want)
	}
}
