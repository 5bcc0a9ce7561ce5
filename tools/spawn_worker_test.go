package tools

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// spawnCall is one call of a fakeSpawner.
type spawnCall struct {
	Parent Caller
	Recipe string
	Task   string
}

// fakeSpawner records its calls and answers with id or err.
type fakeSpawner struct {
	id  string
	err error

	mu    sync.Mutex
	calls []spawnCall
}

var _ Spawner = (*fakeSpawner)(nil)

func (f *fakeSpawner) Spawn(_ context.Context, parent Caller, recipe, task string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, spawnCall{parent, recipe, task})
	return f.id, f.err
}

func (f *fakeSpawner) recorded() []spawnCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func TestSpawnWorker(t *testing.T) {
	t.Parallel()
	errDepth := errors.New("spawn_worker refused: workers of arthur may nest 1 deep (max_depth); finish this task yourself")
	const task = "Find the 2025 population of Lyon and its source."
	tests := []struct {
		name      string
		ctx       context.Context
		spawner   *fakeSpawner
		args      string
		want      Result
		wantCalls []spawnCall
	}{
		{
			name:    "started",
			ctx:     callerCtx(),
			spawner: &fakeSpawner{id: "p-marvin-9"},
			args:    `{"recipe":"marvin-worker","task":"` + task + `"}`,
			want: assistantText("Started worker p-marvin-9 (recipe marvin-worker). Its result will arrive in your inbox as a process_event message. " +
				"If you have nothing else to do now, end your turn with respond(awaiting_user_input: false); you will be woken when it arrives."),
			wantCalls: []spawnCall{{testCaller, "marvin-worker", task}},
		},
		{
			name:    "no calling process",
			ctx:     context.Background(),
			spawner: &fakeSpawner{id: "p-marvin-9"},
			args:    `{"recipe":"marvin-worker","task":"` + task + `"}`,
			want:    ErrorResult("spawn_worker: no calling process"),
		},
		{
			name:      "spawner error is the model's text",
			ctx:       callerCtx(),
			spawner:   &fakeSpawner{err: errDepth},
			args:      `{"recipe":"marvin-worker","task":"` + task + `"}`,
			want:      ErrorResult("%s", errDepth.Error()),
			wantCalls: []spawnCall{{testCaller, "marvin-worker", task}},
		},
		{
			name:      "spawner returns no id",
			ctx:       callerCtx(),
			spawner:   &fakeSpawner{},
			args:      `{"recipe":"marvin-worker","task":"` + task + `"}`,
			want:      ErrorResult("spawn_worker: the runtime started no worker (it returned no id)"),
			wantCalls: []spawnCall{{testCaller, "marvin-worker", task}},
		},
		{
			name:    "blank recipe",
			ctx:     callerCtx(),
			spawner: &fakeSpawner{id: "x"},
			args:    `{"recipe":" ","task":"` + task + `"}`,
			want:    ErrorResult(SpawnRecipeBlank),
		},
		{
			name:    "blank task",
			ctx:     callerCtx(),
			spawner: &fakeSpawner{id: "x"},
			args:    `{"recipe":"marvin-worker","task":"\n"}`,
			want:    ErrorResult(SpawnTaskBlank),
		},
		{
			name:    "missing task",
			ctx:     callerCtx(),
			spawner: &fakeSpawner{id: "x"},
			args:    `{"recipe":"marvin-worker"}`,
			want:    ErrorResult("invalid arguments for spawn_worker: /task: missing required property"),
		},
		{
			name:    "unknown property",
			ctx:     callerCtx(),
			spawner: &fakeSpawner{id: "x"},
			args:    `{"recipe":"marvin-worker","task":"t","priority":1}`,
			want:    ErrorResult("invalid arguments for spawn_worker: /priority: unknown property (allowed: recipe, task)"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := mustRegistry(t, SpawnWorkerTool(tt.spawner))
			got := r.Call(tt.ctx, call(SpawnWorker, tt.args))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, tt.spawner.recorded()); diff != "" {
				t.Errorf("Spawn calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSpawnWorkerErrors checks what the runtime learns from Invoke: the
// spawner's own error and the missing caller stay visible to errors.Is.
func TestSpawnWorkerErrors(t *testing.T) {
	t.Parallel()
	errFull := errors.New("too many workers this turn")
	r := mustRegistry(t, SpawnWorkerTool(&fakeSpawner{err: errFull}))
	args := `{"recipe":"marvin-worker","task":"t"}`
	if _, err := r.Invoke(callerCtx(), call(SpawnWorker, args)); !errors.Is(err, errFull) {
		t.Errorf("Invoke error = %v, want it to match the spawner's error", err)
	}
	if _, err := r.Invoke(context.Background(), call(SpawnWorker, args)); !errors.Is(err, ErrNoCaller) {
		t.Errorf("Invoke error = %v, want it to match ErrNoCaller", err)
	}
}

func TestSpawnWorkerDefinition(t *testing.T) {
	t.Parallel()
	def := SpawnWorkerTool(&fakeSpawner{}).Definition()
	if def.Name != SpawnWorker {
		t.Errorf("Name = %q", def.Name)
	}
	for _, s := range []string{"worker recipe", "sees nothing else", "process_event", "respond(awaiting_user_input: false)", "woken"} {
		if !strings.Contains(def.Description, s) {
			t.Errorf("description lacks %q: %s", s, def.Description)
		}
	}
	want := jsonValue(t, `{
		"type": "object",
		"properties": {
			"recipe": {"type": "string", "description": "Name of the worker recipe to run."},
			"task": {
				"type": "string",
				"description": "The worker's complete, self-contained instructions: what to do, where to look, what the result must contain. The worker sees nothing else."
			}
		},
		"required": ["recipe", "task"],
		"additionalProperties": false
	}`)
	if diff := cmp.Diff(want, jsonValue(t, string(def.Schema))); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}
