// Package enginetest plays golden transcripts of an engine: a scenario
// (testdata/NAME.yaml: a recipe, the user's messages, then further steps
// (messages and approval decisions), the model's script) is played in an
// engines.Session, and the resulting state changes, log, user view and
// provider view (and, when the scenario asks, the system prompts the model
// was shown) are compared with testdata/NAME.golden.yaml, ids and times
// redacted. Each engine's tests run their own scenarios.
package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// Scenario is a testdata/*.yaml file: a recipe, the user's messages (one
// per turn) and the model's script.
type Scenario struct {
	Recipe   recipes.Recipe `yaml:"recipe"`
	Messages []string       `yaml:"messages"`
	// Steps follow the messages, in order.
	Steps []Step `yaml:"steps,omitempty"`
	// Prompts adds to the transcript the system prompt of every model
	// call that differs from the call's before.
	Prompts         bool `yaml:"prompts,omitempty"`
	scripted.Script `yaml:",inline"`
}

// Step is one thing that reaches the process after the scenario's
// messages: a user's message (say) or a decision on a call that waits for
// approval (decide).
type Step struct {
	Say    string    `yaml:"say,omitempty"`
	Decide *Decision `yaml:"decide,omitempty"`
}

// Decision is a person's decision on call Call: approve or reject, with a
// reason, by By (operator:bo when empty).
type Decision struct {
	Call     string                `yaml:"call"`
	Decision conversation.Decision `yaml:"decision"`
	Reason   string                `yaml:"reason,omitempty"`
	By       string                `yaml:"by,omitempty"`
}

// Load reads the scenario at path; its recipe is called "test" and uses
// the scripted provider.
func Load(t testing.TB, path string) *Scenario {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s.Recipe.Name = "test"
	s.Recipe.Model.Provider = "scripted"
	return &s
}

// Kind returns the engine kind to play, stamped by clock (chat.Kind,
// worker.Kind).
type Kind func(clock func() time.Time) engines.Kind

// Play runs a scenario to its end on the engine of kind, with the tool
// registry reg, and returns the session.
func Play(t testing.TB, kind Kind, s *Scenario, reg *tools.Registry) *engines.Session {
	t.Helper()
	ctx := context.Background()
	clock := engines.StepClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	sess := engines.NewSession(kind(clock).Engine, engines.Turn{
		Recipe: &s.Recipe,
		Model:  scripted.New(&s.Script),
		Tools:  reg,
	}, clock)
	for _, m := range s.Messages {
		if _, err := sess.Say(ctx, "user:ada", m); err != nil {
			t.Fatalf("say %q: %v", m, err)
		}
	}
	for i, st := range s.Steps {
		switch {
		case st.Decide != nil:
			by := st.Decide.By
			if by == "" {
				by = "operator:bo"
			}
			d := conversation.ApprovalDecision{CallID: st.Decide.Call, Decision: st.Decide.Decision, Reason: st.Decide.Reason}
			if _, err := sess.Decide(ctx, by, d); err != nil {
				t.Fatalf("steps[%d]: decide %+v: %v", i, d, err)
			}
		case st.Say != "":
			if _, err := sess.Say(ctx, "user:ada", st.Say); err != nil {
				t.Fatalf("steps[%d]: say %q: %v", i, st.Say, err)
			}
		default:
			t.Fatalf("steps[%d]: neither say nor decide", i)
		}
	}
	return sess
}

// renderPrompts returns the transcript's prompts section: the system
// prompt of each model call of sess that differs from the one before.
func renderPrompts(t testing.TB, sess *engines.Session) []byte {
	t.Helper()
	m, ok := sess.Turn.Model.(*scripted.Model)
	if !ok {
		t.Fatalf("the session's model is a %T, not the scenario's script", sess.Turn.Model)
	}
	var prompts []string
	last := ""
	for i, r := range m.Requests() {
		if r.System != last {
			prompts = append(prompts, fmt.Sprintf("call %d:\n%s", i+1, r.System))
			last = r.System
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(map[string][]string{"prompts": prompts}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// transcript is what a golden file holds.
type transcript struct {
	States       []string         `yaml:"states"`
	Final        string           `yaml:"final"`
	Log          []map[string]any `yaml:"log"`
	UserView     []map[string]any `yaml:"user_view"`
	ProviderView []map[string]any `yaml:"provider_view"`
}

// Render returns the golden transcript of a played session.
func Render(t testing.TB, sess *engines.Session) []byte {
	t.Helper()
	var tr transcript
	for _, e := range sess.Log {
		if c := e.StateChange; c != nil {
			tr.States = append(tr.States, fmt.Sprintf("%s -> %s (%s by %s)", c.From, c.To, c.Event, e.By))
		}
	}
	tr.Final = sess.Status.String()
	tr.Log = redact(t, sess.Log)
	tr.UserView = redact(t, conversation.UserView(sess.Log))
	tr.ProviderView = redact(t, conversation.ProviderView(sess.Log))
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(tr); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// redact turns values into generic maps through their JSON, without ids and
// times, which differ from run to run.
func redact[T any](t testing.TB, vs []T) []map[string]any {
	t.Helper()
	out := make([]map[string]any, 0, len(vs))
	for _, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "id")
		delete(m, "at")
		out = append(out, m)
	}
	return out
}

// Golden plays every scenario under dir/testdata on the engine of kind,
// with the registries reg builds, and compares each transcript with its
// golden file, or rewrites the golden files when update is set. It fails
// when there are fewer than least scenarios. pkg names the package in the
// hint of how to update.
func Golden(t *testing.T, pkg string, kind Kind, reg func(testing.TB, *recipes.Recipe) *tools.Registry, update bool, least int) {
	for _, f := range Scenarios(t, least) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := Load(t, f)
			sess := Play(t, kind, s, reg(t, &s.Recipe))
			got := Render(t, sess)
			if s.Prompts {
				got = append(got, renderPrompts(t, sess)...)
			}
			golden := strings.TrimSuffix(f, ".yaml") + ".golden.yaml"
			if update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run `go test ./%s -update` to create it)", err, pkg)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs (-want +got); run `go test ./%s -update` if the change is intended:\n%s", golden, pkg, diff)
			}
		})
	}
}

// Scenarios returns the scenario files under testdata/ (its *.yaml but the
// golden files), failing when there are fewer than least.
func Scenarios(t *testing.T, least int) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".golden.yaml") {
			scenarios = append(scenarios, f)
		}
	}
	if len(scenarios) < least {
		t.Fatalf("found %d scenarios under testdata/, want at least %d", len(scenarios), least)
	}
	return scenarios
}
