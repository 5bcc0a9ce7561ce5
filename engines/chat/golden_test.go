package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// scenario is a testdata/*.yaml file: a recipe, the user's messages (one
// per turn) and the model's script.
type scenario struct {
	Recipe          recipes.Recipe `yaml:"recipe"`
	Worker          bool           `yaml:"worker"`
	Messages        []string       `yaml:"messages"`
	scripted.Script `yaml:",inline"`
}

func loadScenario(t *testing.T, path string) *scenario {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s scenario
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s.Recipe.Name = "test"
	s.Recipe.Model.Provider = "scripted"
	return &s
}

// play runs a scenario to its end and returns the session.
func play(t *testing.T, s *scenario, reg *tools.Registry) *Session {
	t.Helper()
	ctx := context.Background()
	sess := NewSession(&Engine{Clock: StepClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}, Turn{
		Recipe: &s.Recipe,
		Model:  scripted.New(&s.Script),
		Tools:  reg,
		Worker: s.Worker,
	})
	for _, m := range s.Messages {
		if _, err := sess.Say(ctx, "user:ada", m); err != nil {
			t.Fatalf("say %q: %v", m, err)
		}
	}
	return sess
}

// transcript is what a golden file holds.
type transcript struct {
	States       []string         `yaml:"states"`
	Final        string           `yaml:"final"`
	Log          []map[string]any `yaml:"log"`
	UserView     []map[string]any `yaml:"user_view"`
	ProviderView []map[string]any `yaml:"provider_view"`
}

func render(t *testing.T, sess *Session) []byte {
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
func redact[T any](t *testing.T, vs []T) []map[string]any {
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

func TestGoldenTranscripts(t *testing.T) {
	t.Parallel()
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
	if len(scenarios) < 15 {
		t.Fatalf("found %d scenarios under testdata/, want every scenario of the turn protocol", len(scenarios))
	}
	for _, f := range scenarios {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := loadScenario(t, f)
			got := render(t, play(t, s, testRegistry(t, &s.Recipe)))
			golden := strings.TrimSuffix(f, ".yaml") + ".golden.yaml"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run `go test ./engines/chat -update` to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs (-want +got); run `go test ./engines/chat -update` if the change is intended:\n%s", golden, diff)
			}
		})
	}
}
