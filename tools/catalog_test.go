package tools

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinCatalog(t *testing.T) {
	t.Parallel()
	c := BuiltinCatalog()
	if diff := cmp.Diff([]string{FinishTask, PresentResults, Respond, TellUser}, c.names()); diff != "" {
		t.Errorf("built-ins (-want +got):\n%s", diff)
	}
	for name := range c {
		if !IsBuiltin(name) {
			t.Errorf("%q is in the catalog but not in names.go", name)
		}
	}
}

func TestCatalogBuild(t *testing.T) {
	t.Parallel()
	errNoKey := errors.New("api_key is required")
	catalog := BuiltinCatalog()
	catalog["lookup"] = func(config map[string]any) (Tool, error) {
		if config["api_key"] == nil {
			return nil, errNoKey
		}
		return echo("lookup", objSchema), nil
	}
	catalog["misnamed"] = func(map[string]any) (Tool, error) { return echo("other", objSchema), nil }

	tests := []struct {
		name      string
		refs      []Ref
		wantNames []string
		wantErr   string
		wantIs    []error
	}{
		{
			name:      "ok, in list order",
			refs:      []Ref{{Name: "tell_user"}, {Name: "lookup", Config: map[string]any{"api_key": "k"}}, {Name: "respond"}},
			wantNames: []string{"tell_user", "lookup", "respond"},
		},
		{
			name:      "empty list",
			refs:      nil,
			wantNames: []string{},
		},
		{
			name:    "unknown",
			refs:    []Ref{{Name: "respond"}, {Name: "serch"}},
			wantErr: `tool "serch" is not available (known: finish_task, lookup, misnamed, present_results, respond, tell_user)`,
			wantIs:  []error{ErrNotAvailable},
		},
		{
			name:    "built-in not implemented yet",
			refs:    []Ref{{Name: "spawn_worker"}},
			wantErr: `tool "spawn_worker" is not implemented yet`,
			wantIs:  []error{ErrNotImplemented},
		},
		{
			name:    "factory error wrapped with the name",
			refs:    []Ref{{Name: "lookup"}},
			wantErr: `tool "lookup": api_key is required`,
			wantIs:  []error{errNoKey},
		},
		{
			name:    "config for a tool without settings",
			refs:    []Ref{{Name: "respond", Config: map[string]any{"timeout": "1s", "retries": 2}}},
			wantErr: `tool "respond": respond takes no config (got: retries, timeout)`,
		},
		{
			name:    "factory builds a tool of another name",
			refs:    []Ref{{Name: "misnamed"}},
			wantErr: `tool "misnamed": its factory built a tool named "other"`,
		},
		{
			name: "every bad entry is reported",
			refs: []Ref{{Name: "x"}, {Name: "respond"}, {Name: "schedule_wakeup"}},
			wantErr: `tool "x" is not available (known: finish_task, lookup, misnamed, present_results, respond, tell_user)` + "\n" +
				`tool "schedule_wakeup" is not implemented yet`,
			wantIs: []error{ErrNotAvailable, ErrNotImplemented},
		},
		{
			name:    "listed twice",
			refs:    []Ref{{Name: "respond"}, {Name: "respond"}},
			wantErr: `tools: invalid tool definition: duplicate tool name "respond" (tools 0 and 1)`,
			wantIs:  []error{ErrInvalidDefinition},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := catalog.Build(tt.refs)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Build error\n got: %v\nwant: %s", err, tt.wantErr)
				}
				for _, target := range tt.wantIs {
					if !errors.Is(err, target) {
						t.Errorf("error does not match %v", target)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if diff := cmp.Diff(tt.wantNames, r.Names()); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildRefErrorIndex(t *testing.T) {
	t.Parallel()
	_, err := BuiltinCatalog().Build([]Ref{{Name: "respond"}, {Name: "spawn_worker"}})
	var re *RefError
	if !errors.As(err, &re) {
		t.Fatalf("error %v is not a *RefError", err)
	}
	if re.Index != 1 || re.Name != "spawn_worker" {
		t.Errorf("RefError = {Index: %d, Name: %q}, want {1, spawn_worker}", re.Index, re.Name)
	}
}

// TestRuntimeFactories checks the catalog entries the runtime adds: with
// them, every built-in a recipe may name builds, in the list's order, and
// the runtime's take no settings and refuse a nil runtime.
func TestRuntimeFactories(t *testing.T) {
	t.Parallel()
	sp, sch := &fakeSpawner{id: "p-2"}, &fakeScheduler{id: "w-1"}
	catalog := BuiltinCatalog()
	catalog[SpawnWorker] = SpawnWorkerFactory(sp)
	catalog[ScheduleWakeup] = ScheduleWakeupFactory(sch)
	catalog[CancelWakeup] = CancelWakeupFactory(sch)
	names := []string{Respond, TellUser, PresentResults, FinishTask, SpawnWorker, ScheduleWakeup, CancelWakeup, HTTPFetch}
	if diff := cmp.Diff(BuiltinNames(), slices.Sorted(slices.Values(names))); diff != "" {
		t.Errorf("the test does not list every built-in (-want +got):\n%s", diff)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == HTTPFetch }) // package httpfetch's
	refs := make([]Ref, len(names))
	for i, n := range names {
		refs[i] = Ref{Name: n}
	}
	r, err := catalog.Build(refs)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if diff := cmp.Diff(names, r.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	res := r.Call(callerCtx(), call(SpawnWorker, `{"recipe":"marvin-worker","task":"t"}`))
	if res.IsError || len(sp.recorded()) != 1 {
		t.Errorf("spawn_worker through the catalog: %s, %d calls", res.Text(), len(sp.recorded()))
	}

	tests := []struct {
		name    string
		factory Factory
		config  map[string]any
		want    string
	}{
		{"spawn_worker config", SpawnWorkerFactory(sp), map[string]any{"max": 2}, "spawn_worker takes no config (got: max)"},
		{"schedule_wakeup config", ScheduleWakeupFactory(sch), map[string]any{"tz": "UTC"}, "schedule_wakeup takes no config (got: tz)"},
		{"cancel_wakeup config", CancelWakeupFactory(sch), map[string]any{"x": 1}, "cancel_wakeup takes no config (got: x)"},
		{"nil spawner", SpawnWorkerFactory(nil), nil, "spawn_worker has no runtime to act through (its factory was given nil)"},
		{"nil scheduler", ScheduleWakeupFactory(nil), nil, "schedule_wakeup has no runtime to act through (its factory was given nil)"},
		{"nil scheduler for cancel", CancelWakeupFactory(nil), nil, "cancel_wakeup has no runtime to act through (its factory was given nil)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool, err := tt.factory(tt.config)
			if err == nil || err.Error() != tt.want {
				t.Errorf("factory = %v, %v; want error %q", tool, err, tt.want)
			}
		})
	}
}

// TestBuiltinSchemasProviderSafe keeps the built-ins' schemas (http_fetch's:
// package httpfetch) within what
// the providers accept: the OpenAI and Anthropic APIs refuse a tool whose
// schema has oneOf, anyOf, allOf, not, enum or const at its top level, and
// fail every request that carries it.
func TestBuiltinSchemasProviderSafe(t *testing.T) {
	t.Parallel()
	all := []Tool{
		RespondTool(), TellUserTool(), FinishTaskTool(),
		SpawnWorkerTool(&fakeSpawner{}), ScheduleWakeupTool(&fakeScheduler{}), CancelWakeupTool(&fakeScheduler{}),
		presentTool(t),
	}
	for _, tool := range all {
		def := tool.Definition()
		schema, ok := jsonValue(t, string(def.Schema)).(map[string]any)
		if !ok || schema["type"] != "object" {
			t.Errorf("%s: schema is not an object schema", def.Name)
			continue
		}
		for _, kw := range []string{"oneOf", "anyOf", "allOf", "not", "enum", "const", "if", "$ref"} {
			if _, ok := schema[kw]; ok {
				t.Errorf("%s: schema has %q at its top level", def.Name, kw)
			}
		}
		if schema["additionalProperties"] != false {
			t.Errorf("%s: schema does not refuse unknown properties", def.Name)
		}
	}
	mustRegistry(t, all...) // and they compile
}
