package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
)

// GET /v1/processes/{id} of a process whose recipe has phases shows where
// its pipeline stands, read from its log: the phase it is in, how it got
// there, and the results of the newest run's phases; a new run starts
// with none. A process of a recipe without phases shows no pipeline. The
// answers hold to openapi.json (its Pipeline, and the Recipe's phases).
func TestProcessPipeline(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.add("p_vogon", "alice", lifecycle.Status{State: lifecycle.Blocked})
	b.fake.mu.Lock()
	b.fake.procs["p_vogon"].Recipe, b.fake.procs["p_vogon"].Engine = "vogon-review", "vogon"
	b.fake.mu.Unlock()
	at := func(sec int, e conversation.Event) conversation.Event {
		e.At = fakeNow.Add(time.Duration(sec) * time.Second)
		return e
	}
	draft := json.RawMessage(`{"body":"Brain runs agents.","title":"Brain"}`)
	b.fake.appendEvents("p_vogon",
		at(1, conversation.NewPhaseChange("", "draft", conversation.PhaseStart, nil)),
		at(2, conversation.NewPhaseChange("draft", "critique", conversation.PhaseDone, json.RawMessage(`{"title":"Old"}`))),
		at(3, conversation.NewPhaseChange("critique", "draft", conversation.PhaseBackTo, nil)),
		at(4, conversation.NewPhaseChange("draft", "critique", conversation.PhaseDone, draft)),
	)
	get := func(pid string) Process {
		t.Helper()
		w := b.do(http.MethodGet, "/v1/processes/"+pid, tokAlice, nil, "")
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", pid, w.Code, w.Body)
		}
		var p Process
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	passed := fakeNow.Add(4 * time.Second).UTC()
	want := &Pipeline{Phase: "critique", Since: "done", Phases: []PhaseResult{
		{Name: "draft", Result: draft, PassedAt: &passed}, {Name: "critique"}, {Name: "final"},
	}}
	if got := get("p_vogon").Pipeline; !cmp.Equal(got, want) {
		t.Errorf("pipeline in the critique:\n%s", cmp.Diff(want, got))
	}

	b.fake.appendEvents("p_vogon",
		at(5, conversation.NewPhaseChange("critique", "final", conversation.PhaseDone, json.RawMessage(`{"issues":[]}`))),
		at(6, conversation.NewPhaseChange("final", "", conversation.PhaseDone, json.RawMessage(`"Brain runs agents."`))),
	)
	if got := get("p_vogon").Pipeline; got == nil || got.Phase != "" || got.Since != "done" || string(got.Phases[2].Result) != `"Brain runs agents."` {
		t.Errorf("pipeline after its last phase: %+v; want no phase, since done, final's result", got)
	}
	b.fake.appendEvents("p_vogon", at(7, conversation.NewPhaseChange("", "draft", conversation.PhaseStart, nil)))
	want = &Pipeline{Phase: "draft", Since: "start", Phases: []PhaseResult{{Name: "draft"}, {Name: "critique"}, {Name: "final"}}}
	if got := get("p_vogon").Pipeline; !cmp.Equal(got, want) {
		t.Errorf("pipeline of a new run:\n%s", cmp.Diff(want, got))
	}

	if got := get("p_alice").Pipeline; got != nil {
		t.Errorf("a chat process's pipeline = %+v, want none", got)
	}
	if w := b.do(http.MethodGet, "/v1/recipes/vogon-review", tokAlice, nil, ""); w.Code != http.StatusOK {
		t.Errorf("GET /v1/recipes/vogon-review: %d %s", w.Code, w.Body)
	}
}

// TestPipelineReadsItsNewestRun checks that the pipeline of a process with
// a long log is read back from the log's end to its newest run's start,
// not from the log's beginning, and still says where it stands.
func TestPipelineReadsItsNewestRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.add("p_vogon", "alice", lifecycle.Status{State: lifecycle.Blocked})
	b.fake.mu.Lock()
	b.fake.procs["p_vogon"].Recipe, b.fake.procs["p_vogon"].Engine = "vogon-review", "vogon"
	b.fake.mu.Unlock()
	filler := func(n int) []conversation.Event {
		evs := make([]conversation.Event, n)
		for i := range evs {
			evs[i] = conversation.NewSystemNotice("note", fmt.Sprint(i))
		}
		return evs
	}
	draft := json.RawMessage(`{"title":"New"}`)
	b.fake.appendEvents("p_vogon", conversation.NewPhaseChange("", "draft", conversation.PhaseStart, nil))
	b.fake.appendEvents("p_vogon", conversation.NewPhaseChange("draft", "critique", conversation.PhaseDone, json.RawMessage(`{"title":"Old"}`)))
	b.fake.appendEvents("p_vogon", filler(1000)...)
	b.fake.appendEvents("p_vogon", conversation.NewPhaseChange("", "draft", conversation.PhaseStart, nil))
	b.fake.appendEvents("p_vogon", filler(300)...) // the newest start is in the second page back
	b.fake.appendEvents("p_vogon", conversation.NewPhaseChange("draft", "critique", conversation.PhaseDone, draft))
	b.fake.mu.Lock()
	b.fake.logServed = 0
	b.fake.mu.Unlock()
	w := b.do(http.MethodGet, "/v1/processes/p_vogon", tokAlice, nil, "")
	var p Process
	if err := json.Unmarshal(w.Body.Bytes(), &p); w.Code != http.StatusOK || err != nil {
		t.Fatalf("GET: %d %s", w.Code, w.Body)
	}
	if got := p.Pipeline; got == nil || got.Phase != "critique" || string(got.Phases[0].Result) != string(draft) {
		t.Errorf("pipeline = %+v; want in the critique, the newest run's draft", got)
	}
	b.fake.mu.Lock()
	served := b.fake.logServed
	b.fake.mu.Unlock()
	if served > 2*pipelinePage {
		t.Errorf("the pipeline read %d events of a log of 1,304; want its newest run's pages (%d at most)", served, 2*pipelinePage)
	}
}
