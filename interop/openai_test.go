package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
)

// echo answers the last user message with respond("You said: ..."), its
// arguments streamed in two pieces, each call using 10 input and 5 output
// tokens.
type echo struct{}

func (echo) Generate(_ context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	var last string
	for _, m := range req.Messages {
		if m.Role == conversation.MessageUser && len(m.Content) > 0 {
			last = m.Content[0].Text
		}
	}
	text, _ := json.Marshal("You said: " + last)
	args := `{"message": ` + string(text) + `, "awaiting_user_input": true}`
	cut := len(`{"message": "You said`)
	return func(yield func(llm.Part, error) bool) {
		call := func(kind llm.PartKind, frag string) bool {
			return yield(llm.Part{Kind: kind, ToolCall: &conversation.ToolCall{ID: "c1", Name: "respond", Arguments: json.RawMessage(frag)}}, nil)
		}
		_ = call(llm.PartToolArgs, args[:cut]) && call(llm.PartToolArgs, args[cut:]) && call(llm.PartToolCall, args) &&
			yield(llm.Part{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}}, nil)
	}
}

// The official OpenAI Node SDK lists the recipes as models, creates a
// response, continues it with previous_response_id, streams one with its
// stream helper, makes a chat completion, and raises NotFoundError for an
// unknown model.
func TestOpenAINodeSDK(t *testing.T) {
	t.Parallel()
	nodeBin, dir := testutil.Interop(t)
	n, err := brain.New(brain.Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": echo{}}, Recipes: recipes.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	srv, err := api.New(api.Config{Backend: n, Tokens: []api.Token{{Name: "ada", Role: api.RoleUser, SHA256: api.HashToken("tok-ada")}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, nodeBin, filepath.Join(dir, "openai.mjs"), ts.URL, "tok-ada")
	cmd.Dir, cmd.Stderr = dir, &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node openai.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("a line of openai.mjs is not JSON: %q", sc.Text())
		}
		steps[line["step"].(string)] = line
		delete(line, "step")
	}
	first, next := steps["create"], steps["continue"]
	if first == nil || next == nil {
		t.Fatalf("steps = %v", steps)
	}
	if process, _ := first["process"].(string); process == "" || next["process"] != process || next["previous"] != first["id"] || next["id"] == first["id"] {
		t.Errorf("create %v, continue %v: want the continued response in the same process, after the first", first, next)
	}
	for _, s := range []string{"create", "continue"} {
		delete(steps[s], "id")
		delete(steps[s], "process")
		delete(steps[s], "previous")
	}
	if ids, _ := steps["models"]["ids"].([]any); !slices.Contains(ids, any("default")) {
		t.Errorf("models = %v, want the recipes, default among them", steps["models"])
	}
	delete(steps, "models")
	want := map[string]map[string]any{
		"create":   {"status": "completed", "text": "You said: Hello", "total": 15.0},
		"continue": {"status": "completed", "text": "You said: Again"},
		"stream": {"status": "completed", "deltas": "You said: Stream it", "text": "You said: Stream it", "types": []any{
			"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
			"response.completed"}},
		"chat":          {"text": "You said: Chat", "total": 15.0},
		"unknown model": {"error": "NotFoundError", "status": 404.0, "param": "model"},
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("the Node SDK's steps (-want +got):\n%s", diff)
	}
}
