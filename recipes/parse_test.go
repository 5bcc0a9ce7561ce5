package recipes

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const header = "name: x\nmodel: {provider: default}\n"

// TestParseProblems covers problems the golden files of testdata/bad do
// not: each case is one recipe and the exact messages.
func TestParseProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{
			name: "zero turn timeout",
			yaml: header + "tools: [respond]\nlimits: {turn_timeout: 0s}\n",
			want: "x.yaml:4:24: limits.turn_timeout: must be more than zero; leave it out for no limit",
		},
		{
			name: "duration overflow",
			yaml: header + "tools: [respond]\nlimits: {turn_timeout: 99999999999h}\n",
			want: "x.yaml:4:24: limits.turn_timeout: duration \"99999999999h\" is too long: the longest is 2562047h47m16.854775807s, about 292 years",
		},
		{
			name: "max_depth and max_workers out of range",
			yaml: header + "tools: [respond]\nlimits: {max_depth: 0, max_workers: 101}\n",
			want: "x.yaml:4:21: limits.max_depth: must be between 1 and 10 (got 0)\n" +
				"x.yaml:4:37: limits.max_workers: must be between 0 and 100 (got 101)",
		},
		{
			name: "max_depth above 10, max_workers negative",
			yaml: header + "tools: [respond]\nlimits: {max_depth: 11, max_workers: -1}\n",
			want: "x.yaml:4:21: limits.max_depth: must be between 1 and 10 (got 11)\n" +
				"x.yaml:4:38: limits.max_workers: must be between 0 and 100 (got -1)",
		},
		{
			name: "max_context_tokens too small for a conversation",
			yaml: header + "tools: [respond]\nlimits: {max_context_tokens: 500}\n",
			want: "x.yaml:4:30: limits.max_context_tokens: must be between 1000 and 10000000 (got 500)",
		},
		{
			name: "max_log_events too small to hold a few turns",
			yaml: header + "tools: [respond]\nlimits: {max_log_events: 20}\n",
			want: "x.yaml:4:26: limits.max_log_events: must be between 100 and 100000000 (got 20)",
		},
		{
			name: "max_workers misspelt",
			yaml: header + "tools: [respond]\nlimits: {max_worker: 2}\n",
			want: "x.yaml:4:10: limits.max_worker: unknown field; did you mean `max_workers`?",
		},
		{
			name: "missing provider",
			yaml: "name: x\nmodel: {name: gpt-5}\ntools: [respond]\n",
			want: "x.yaml:2:8: model.provider: required field is missing; add `provider: default` for the first configured provider, or a provider's name",
		},
		{
			name: "default turn end without respond",
			yaml: header + "tools: [tell_user]\n",
			want: "x.yaml:3:8: tools: a chat recipe ends every turn with the `respond` tool (turn_end defaults to `respond`); add `- respond` to tools, or set `turn_end: natural` for the legacy mode",
		},
		{
			name: "explicit turn end without respond",
			yaml: header + "turn_end: respond\n",
			want: "x.yaml:3:11: turn_end: turn_end `respond` needs the `respond` tool; add `- respond` to tools, or set `turn_end: natural` for the legacy mode",
		},
		{
			name: "worker without finish_task",
			yaml: header + "engine: worker\ntools: [http_fetch]\n",
			want: "x.yaml:4:8: tools: a worker ends its task with the `finish_task` tool (turn_end defaults to `finish_task`); add `- finish_task` to tools, or set `turn_end: natural`",
		},
		{
			name: "tool name not a server",
			yaml: header + "tools: [respond, github.search]\n",
			want: "x.yaml:3:18: tools[1]: unknown MCP server `github`: no server of that name in `mcp_servers`; declare it there with `name: github` and `command:` or `url:`",
		},
		{
			name: "tool config not a mapping",
			yaml: header + "tools: [respond, {name: http_fetch, config: 3}]\n",
			want: "x.yaml:3:45: tools[1].config: must be a mapping (got 3)",
		},
		{
			name: "tool of wrong type",
			yaml: header + "tools: [respond, [http_fetch]]\n",
			want: "x.yaml:3:18: tools[1]: must be a string or a mapping (got a list)",
		},
		{
			name: "tool mapping without name",
			yaml: header + "tools: [respond, {nam: http_fetch}]\n",
			want: "x.yaml:3:18: tools[1].name: required field is missing; add `name`\n" +
				"x.yaml:3:19: tools[1].nam: unknown field; did you mean `name`?",
		},
		{
			name: "approval on the tool that ends a worker's task",
			yaml: header + "engine: worker\ntools: [{name: finish_task, approval: {by: user}}]\n",
			want: "x.yaml:4:29: tools[0].approval: `finish_task` ends the task; it cannot wait for approval; remove `approval`",
		},
		{
			name: "approval timeout beyond what a duration holds",
			yaml: header + "tools: [respond, {name: http_fetch, approval: {timeout: 99999999999h}}]\n",
			want: "x.yaml:3:57: tools[1].approval.timeout: duration \"99999999999h\" is too long: the longest is 2562047h47m16.854775807s, about 292 years",
		},
		{
			name: "approval left empty",
			yaml: header + "tools: [respond, {name: http_fetch, approval: }]\n",
			want: "x.yaml:3:47: tools[1].approval: must be `required` or a mapping of `by`, `timeout` (got nothing)",
		},
		{
			name: "steering of user messages not one of the four",
			yaml: header + "tools: [respond]\nsteering: {user_messages: steal}\n",
			want: "x.yaml:4:27: steering.user_messages: must be one of `queue`, `steer`, `interrupt`, `reject` (got \"steal\"); did you mean `steer`?",
		},
		{
			name: "steering of operator messages",
			yaml: header + "tools: [respond]\nsteering: {operator_messages: queue}\n",
			want: "x.yaml:4:12: steering.operator_messages: unknown field; the fields here are `user_messages`",
		},
		{
			name: "schedule without message",
			yaml: header + "tools: [respond]\nwakeup: {schedules: [{cron: '@daily'}]}\n",
			want: "x.yaml:4:22: wakeup.schedules[0].message: required field is missing; add `message`",
		},
		{
			name: "empty string",
			yaml: header + "tools: [respond]\nvalidation: {no_tool_call: {correction: ''}}\n",
			want: "x.yaml:4:41: validation.no_tool_call.correction: must not be empty; write a value or leave the field out",
		},
		{
			name: "odd key in path",
			yaml: header + "tools: [respond]\npresentation: {links: {'a b': /x}}\n",
			want: "x.yaml:4:24: presentation.links[\"a b\"]: a link name must be lowercase letters, digits and `_`, starting with a letter",
		},
		{
			name: "comments only",
			yaml: "# nothing here\n",
			want: "x.yaml:1:1: file is empty; a recipe needs at least `name:` and `model:` (or `extends:` a recipe that has a model)",
		},
		{
			name: "null document",
			yaml: "---\n~\n",
			want: "x.yaml:1:1: file is empty; a recipe needs at least `name:` and `model:` (or `extends:` a recipe that has a model)",
		},
		{
			name: "scalar document",
			yaml: "hello\n",
			want: "x.yaml:1:1: a recipe file must hold a mapping of fields such as `name:` and `model:` (got \"hello\")",
		},
		{
			name: "tab indentation",
			yaml: "name: x\nmodel:\n\tprovider: default\n",
			want: "x.yaml:3:1: invalid YAML: found character that cannot start any token; indent with spaces, YAML does not allow tabs",
		},
		{
			name: "unclosed flow sequence",
			yaml: header + "tools: [respond\n",
			want: "x.yaml:3:1: invalid YAML: did not find expected ',' or ']'; check the indentation, the quotes and the brackets around this line",
		},
		{
			name: "extends itself",
			yaml: "name: x\nextends: x\n",
			want: "x.yaml:2:10: extends: a recipe cannot extend itself, and there is no built-in recipe `x` to build on; remove `extends`",
		},
		{
			name: "extends unknown without a close name",
			yaml: "name: x\nextends: zzz\n",
			want: "x.yaml:2:10: extends: unknown recipe `zzz`: no built-in recipe of that name; the built-in recipes are `arthur`, `default`, `ford`, `marvin-worker`, `vogon-review`, `web-research`, `zaphod-panel`",
		},
		{
			name: "many problems at once",
			yaml: "name: x\nengine: Robot\nmodel: {provider: default, max_tokens: -1}\ntools: respond\nvalidation: {max_corrections: 11}\nturn_end: never\n",
			want: "x.yaml:2:9: engine: must be lowercase letters, digits, `-` and `_`, starting with a letter or digit (got \"Robot\")\n" +
				"x.yaml:3:40: model.max_tokens: must be between 1 and 1000000 (got -1)\n" +
				"x.yaml:4:8: tools: must be a list (got \"respond\"); write a list, one `- item` per line\n" +
				"x.yaml:5:31: validation.max_corrections: must be between 0 and 10 (got 11)\n" +
				"x.yaml:6:11: turn_end: must be one of `respond`, `finish_task`, `natural` (got \"never\")",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", r)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	src := `# yaml-language-server: $schema=./recipe.schema.json
name: research-bot
extends: ford
model:
  name: gpt-5
  temperature: 0
tools:
  - respond
  - github.*
  - name: http_fetch
    config:
      timeout: 10s
      headers: {Accept: text/html}
mcp_servers:
  - name: github
    command: github-mcp-server
    args: [stdio]
    env: {GITHUB_TOKEN: secret}
wakeup:
  schedules:
    - cron: CRON_TZ=Europe/Berlin 0 9 * * 1-5
      message: Morning report, please.
    - cron: "@every 90m"
      message: Anything new?
limits:
  turn_timeout: 2m30s
  max_depth: 1
  max_workers: 0
base: &shared
  unused: true
`
	// The last field is unknown: Parse must refuse it, then accept the rest.
	if _, err := Parse("research-bot.yaml", []byte(src)); err == nil {
		t.Fatal("Parse accepted an unknown field")
	}
	src = src[:len(src)-len("base: &shared\n  unused: true\n")]
	r, err := Parse("research-bot.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	want := &Recipe{
		Name:         "research-bot",
		Description:  "A chat assistant whose turns are checked by the validators.",
		Engine:       EngineChat,
		Extends:      "ford",
		Model:        Model{Provider: "default", Name: "gpt-5", Temperature: &zero},
		SystemPrompt: r.SystemPrompt,
		Tools: []ToolRef{
			{Name: "respond"},
			{Name: "github.*"},
			{Name: "http_fetch", Config: map[string]any{"timeout": "10s", "headers": map[string]any{"Accept": "text/html"}}},
		},
		MCPServers: []MCPServer{{Name: "github", Command: "github-mcp-server", Args: []string{"stdio"}, Env: map[string]string{"GITHUB_TOKEN": "secret"}}},
		Validation: Validation{Enabled: boolp(true), MaxCorrections: intp(2)},
		Wakeup: Wakeup{Schedules: []Schedule{
			{Cron: "CRON_TZ=Europe/Berlin 0 9 * * 1-5", Message: "Morning report, please."},
			{Cron: "@every 90m", Message: "Anything new?"},
		}},
		Limits: Limits{TurnTimeout: Duration(150 * time.Second), MaxDepth: 1, MaxWorkers: intp(0)},
		A2A:    A2A{Expose: true, Skills: r.A2A.Skills}, // default's, through ford
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	if r.Limits.Timeout() != 150*time.Second {
		t.Errorf("Timeout() = %v", r.Limits.Timeout())
	}
	if r.Limits.Depth() != 1 || r.Limits.Workers() != 0 {
		t.Errorf("Depth(), Workers() = %d, %d; want 1, 0 (an explicit 0 is no default)", r.Limits.Depth(), r.Limits.Workers())
	}
	for _, s := range r.Wakeup.Schedules {
		if _, err := s.Parse(); err != nil {
			t.Errorf("Schedule.Parse(%q): %v", s.Cron, err)
		}
	}
}

// TestParseAliases checks that anchors and aliases work, and that an alias
// bomb is stopped.
func TestParseAliases(t *testing.T) {
	t.Parallel()
	r, err := Parse("x.yaml", []byte("name: x\nmodel: &m {provider: default}\ntools: &t [respond]\nvalidation: {enabled: true}\n"))
	if err != nil || r.Model.Provider != "default" {
		t.Fatalf("Parse with anchors: %v, %+v", err, r)
	}

	bomb := "name: x\nmodel: {provider: default}\ntools: [respond]\npresentation:\n  links:\n    a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g"} {
		bomb += "    " + n + ": &" + n + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = n
	}
	_, err = Parse("x.yaml", []byte(bomb))
	if err == nil {
		t.Fatal("Parse accepted an alias bomb")
	}
	if got, want := err.Error(), "write it out without `*alias` references"; !strings.Contains(got, want) {
		t.Errorf("Parse error = %q, want one containing %q", got, want)
	}
}

func TestParseToolConfig(t *testing.T) {
	t.Parallel()
	r, err := Parse("x.yaml", []byte(header+"tools:\n  - respond\n  - name: http_fetch\n    config: {1: one, true: yes, nested: {2: two}, list: [{3: three}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"1": "one", "true": "yes",
		"nested": map[string]any{"2": "two"},
		"list":   []any{map[string]any{"3": "three"}},
	}
	if diff := cmp.Diff(want, r.Tools[1].Config); diff != "" {
		t.Errorf("config mismatch (-want +got):\n%s", diff)
	}
}
