package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/llm/providers"
	"github.com/engine-brain/brain/store"
)

// A token hash for tests: the SHA-256 of "secret".
const secretHash = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"

// writeConfig writes a brain.yaml into a new directory and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "brain.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestLoadServeConfigPrecedence(t *testing.T) {
	t.Parallel()
	if api.HashToken("secret") != secretHash {
		t.Fatalf("secretHash is stale: %s", api.HashToken("secret"))
	}
	const file = `# every setting
listen: 127.0.0.1:9000
redis: redis://localhost:6379/2
recipes: my-recipes
concurrency: 4
node_id: node-a
engines: [worker]
insecure_open: false
max_body: 1MiB
history_memory: 64MiB
retain_finished: 30d
inbox_limit: 50
max_log_events: 5000
max_processes_per_owner: 20
wait_replicas: 1
affinity_wait: 100ms
log:
  format: json
  level: warn
auth:
  tokens:
    - name: alice
      role: user
      sha256: ` + secretHash + `
`
	fromFile := func(dir string) serveConfig {
		return serveConfig{
			Listen: "127.0.0.1:9000", Redis: "redis://localhost:6379/2", Recipes: filepath.Join(dir, "my-recipes"),
			Concurrency: 4, NodeID: "node-a", Engines: []string{"worker"}, MaxBody: 1 << 20, HistoryMemory: 64 << 20,
			RetainFinished: 30 * 24 * time.Hour, InboxLimit: 50, MaxLogEvents: 5000, MaxProcessesPerOwner: 20, WaitReplicas: 1,
			AffinityWait: 100 * time.Millisecond,
			Tokens:       []api.Token{{Name: "alice", Role: api.RoleUser, SHA256: secretHash}},
			Log:          logOptions{Format: "json", Level: "warn"},
			File:         filepath.Join(dir, "brain.yaml"),
		}
	}
	tests := []struct {
		name string
		file string // brain.yaml's text; "" for no file
		env  map[string]string
		args []string
		want func(dir string) serveConfig // dir: the file's directory
	}{
		{
			name: "defaults",
			want: func(string) serveConfig { return defaultServeConfig() },
		},
		{
			name: "file",
			file: file,
			want: fromFile,
		},
		{
			name: "env over file",
			file: file,
			env:  map[string]string{"BRAIN_LISTEN": "127.0.0.1:9001", "BRAIN_ENGINES": "chat,worker", "BRAIN_RECIPES": "env-recipes", "BRAIN_NODE_ID": "", "BRAIN_LOG_LEVEL": "debug"},
			want: func(dir string) serveConfig {
				c := fromFile(dir)
				c.Listen, c.Engines, c.Recipes = "127.0.0.1:9001", []string{"chat", "worker"}, "env-recipes"
				c.Log.Level = "debug"
				return c // an empty variable counts as unset: node_id stays
			},
		},
		{
			name: "flags over env over file",
			file: file,
			env:  map[string]string{"BRAIN_LISTEN": "127.0.0.1:9001", "BRAIN_CONCURRENCY": "3", "BRAIN_INSECURE_OPEN": "false", "BRAIN_LOG_LEVEL": "debug", "BRAIN_LOG_FORMAT": "console"},
			args: []string{"--listen", "0.0.0.0:9002", "--insecure-open", "--max-body=4096", "--redis", "embedded", "--wait-replicas", "0", "--log-level", "error"},
			want: func(dir string) serveConfig {
				c := fromFile(dir)
				c.Listen, c.Concurrency, c.InsecureOpen, c.MaxBody, c.Redis = "0.0.0.0:9002", 3, true, 4096, "embedded"
				c.WaitReplicas = 0
				c.Log = logOptions{Format: "console", Level: "error"}
				return c
			},
		},
		{
			name: "flags over defaults without a file",
			args: []string{"--concurrency", "2", "--engines", "chat", "--node-id", "n1", "--recipes", "rel", "--history-memory", "1GiB", "--retain-finished", "90m", "--inbox-limit", "0", "--max-log-events", "100", "--max-processes-per-owner", "3", "--affinity-wait", "0"},
			want: func(string) serveConfig {
				c := defaultServeConfig()
				c.Concurrency, c.Engines, c.NodeID, c.Recipes, c.HistoryMemory = 2, []string{"chat"}, "n1", "rel", 1<<30
				c.RetainFinished, c.InboxLimit, c.MaxLogEvents, c.MaxProcessesPerOwner = 90*time.Minute, 0, 100, 3
				c.AffinityWait = 0
				return c
			},
		},
		{
			name: "the last of a repeated flag wins",
			args: []string{"--listen", "127.0.0.1:1", "--listen", "127.0.0.1:2"},
			want: func(string) serveConfig {
				c := defaultServeConfig()
				c.Listen = "127.0.0.1:2"
				return c
			},
		},
		{
			name: "upper-case hashes, anchors and quoted values",
			file: "listen: &addr \"127.0.0.1:9003\"\nnode_id: *addr\nauth:\n  tokens:\n    - {name: ops, role: admin, sha256: " + strings.ToUpper(secretHash) + "}\n",
			want: func(dir string) serveConfig {
				c := defaultServeConfig()
				c.Listen, c.NodeID, c.File = "127.0.0.1:9003", "127.0.0.1:9003", filepath.Join(dir, "brain.yaml")
				c.Tokens = []api.Token{{Name: "ops", Role: api.RoleAdmin, SHA256: secretHash}}
				return c
			},
		},
		{
			name: "an empty file sets nothing",
			file: "# nothing yet\n",
			want: func(dir string) serveConfig {
				c := defaultServeConfig()
				c.File = filepath.Join(dir, "brain.yaml")
				return c
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			dir := ""
			if tt.file != "" {
				path := writeConfig(t, tt.file)
				dir = filepath.Dir(path)
				env["BRAIN_CONFIG"] = path // the file by environment; --config is tested below
			}
			got, err := loadServeConfig(tt.args, envOf(env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want(dir), got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeInboxLimit(t *testing.T) {
	t.Parallel()
	for limit, want := range map[int]int{0: -1, 1: 1, store.DefaultInboxLimit: store.DefaultInboxLimit} {
		if got := (serveConfig{InboxLimit: limit}).nodeInboxLimit(); got != want {
			t.Errorf("inbox_limit %d: the node's InboxLimit is %d, want %d", limit, got, want)
		}
	}
}

func TestNodeAffinityWait(t *testing.T) {
	t.Parallel()
	for wait, want := range map[time.Duration]time.Duration{0: -1, brain.DefaultAffinityWait: brain.DefaultAffinityWait, time.Second: time.Second} {
		if got := (serveConfig{AffinityWait: wait}).nodeAffinityWait(); got != want {
			t.Errorf("affinity_wait %s: the node's AffinityWait is %s, want %s", wait, got, want)
		}
	}
}

func TestLoadServeConfigProviders(t *testing.T) {
	t.Parallel()
	const twoProviders = `providers:
  - name: ollama
    type: openai
    base_url: http://127.0.0.1:11434/v1
    model: llama3.2
    max_context_tokens: 6000
  - name: gpt
    type: openai
    api_key_env: MY_OPENAI_KEY
    model: gpt-4o-mini
    max_attempts: 2
`
	fromFile := []providers.Config{
		{Name: "ollama", Type: providers.TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3.2", MaxContextTokens: 6000},
		{Name: "gpt", Type: providers.TypeOpenAI, APIKeyEnv: "MY_OPENAI_KEY", APIKey: "sk-file", Model: "gpt-4o-mini", MaxAttempts: 2},
	}
	tests := []struct {
		name string
		file string // brain.yaml's text; "" for no file
		env  map[string]string
		want []providers.Config
	}{
		{
			name: "none",
			env:  map[string]string{"OPENAI_API_KEY": ""}, // empty counts as unset
		},
		{
			name: "file, in order",
			file: twoProviders,
			env:  map[string]string{"MY_OPENAI_KEY": "sk-file"},
			want: fromFile,
		},
		{
			name: "OPENAI_API_KEY without a file",
			env:  map[string]string{"OPENAI_API_KEY": "sk-env"},
			want: []providers.Config{{Name: "openai", Type: providers.TypeOpenAI, APIKeyEnv: "OPENAI_API_KEY", APIKey: "sk-env"}},
		},
		{
			name: "OPENAI_BASE_URL alone: a server without a key",
			env:  map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"},
			want: []providers.Config{{Name: "openai", Type: providers.TypeOpenAI, BaseURL: "http://127.0.0.1:8000/v1"}},
		},
		{
			name: "both OPENAI_* variables",
			env:  map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "https://proxy.example/v1"},
			want: []providers.Config{{Name: "openai", Type: providers.TypeOpenAI, BaseURL: "https://proxy.example/v1", APIKeyEnv: "OPENAI_API_KEY", APIKey: "sk-env"}},
		},
		{
			name: "the file's list wins over OPENAI_*",
			file: twoProviders,
			env:  map[string]string{"MY_OPENAI_KEY": "sk-file", "OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"},
			want: fromFile,
		},
		{
			name: "ANTHROPIC_API_KEY without a file",
			env:  map[string]string{"ANTHROPIC_API_KEY": "sk-ant"},
			want: []providers.Config{{Name: "anthropic", Type: providers.TypeAnthropic, APIKeyEnv: "ANTHROPIC_API_KEY", APIKey: "sk-ant"}},
		},
		{
			name: "OpenAI and Anthropic keys: openai first, so it is the default",
			env:  map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-env"},
			want: []providers.Config{
				{Name: "openai", Type: providers.TypeOpenAI, APIKeyEnv: "OPENAI_API_KEY", APIKey: "sk-env"},
				{Name: "anthropic", Type: providers.TypeAnthropic, APIKeyEnv: "ANTHROPIC_API_KEY", APIKey: "sk-ant"},
			},
		},
		{
			name: "an anthropic provider in the file needs no base_url",
			file: "providers:\n  - {name: claude, type: anthropic, api_key_env: MY_ANT_KEY, model: claude-sonnet-4-5}\n",
			env:  map[string]string{"MY_ANT_KEY": "sk-ant"},
			want: []providers.Config{{Name: "claude", Type: providers.TypeAnthropic, APIKeyEnv: "MY_ANT_KEY", APIKey: "sk-ant", Model: "claude-sonnet-4-5"}},
		},
		{
			name: "OPENAI_* when the file lists no provider",
			file: "listen: 127.0.0.1:9000\nproviders: []\n",
			env:  map[string]string{"OPENAI_API_KEY": "sk-env"},
			want: []providers.Config{{Name: "openai", Type: providers.TypeOpenAI, APIKeyEnv: "OPENAI_API_KEY", APIKey: "sk-env"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			if tt.file != "" {
				env["BRAIN_CONFIG"] = writeConfig(t, tt.file)
			}
			got, err := loadServeConfig(nil, envOf(env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Providers); diff != "" {
				t.Errorf("providers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadServeConfigGemini(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"BRAIN_CONFIG":  writeConfig(t, "providers:\n  - {name: google, type: gemini, api_key_env: MY_GEMINI_KEY, model: gemini-2.5-flash, base_url: \"https://gemini-proxy.example\"}\n"),
		"MY_GEMINI_KEY": "AIza-file",
	}
	got, err := loadServeConfig(nil, envOf(env), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []providers.Config{{Name: "google", Type: providers.TypeGemini, BaseURL: "https://gemini-proxy.example", APIKeyEnv: "MY_GEMINI_KEY", APIKey: "AIza-file", Model: "gemini-2.5-flash"}}
	if diff := cmp.Diff(want, got.Providers); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}

	env["BRAIN_CONFIG"] = writeConfig(t, "providers:\n  - {name: google, type: gemni, api_key_env: MY_GEMINI_KEY}\n")
	if _, err := loadServeConfig(nil, envOf(env), io.Discard); err == nil || !strings.Contains(err.Error(), `unknown provider type "gemni"; want openai`) || !strings.Contains(err.Error(), "anthropic or gemini") {
		t.Errorf("an unknown type: %v, want an error naming gemini among the types", err)
	}
}

func TestLoadServeConfigFlagNamesFile(t *testing.T) {
	t.Parallel()
	byEnv := writeConfig(t, "listen: 127.0.0.1:1\n")
	byFlag := writeConfig(t, "listen: 127.0.0.1:2\n")
	got, err := loadServeConfig([]string{"--config", byFlag}, envOf(map[string]string{"BRAIN_CONFIG": byEnv}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got.Listen != "127.0.0.1:2" || got.File != byFlag {
		t.Errorf("--config lost to BRAIN_CONFIG: listen %s from %s", got.Listen, got.File)
	}
}

func TestLoadServeConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		args    []string
		want    []string // each must appear in the error
		notWant []string // none may appear in it: keys
	}{
		{
			name: "unknown field",
			file: "listen: 127.0.0.1:8080\nlisen: 127.0.0.1:8081\n",
			want: []string{"brain.yaml:2:1: lisen: unknown field; want one of auth, providers, listen, redis"},
		},
		{
			name: "bad value",
			file: "concurrency: lots\n",
			want: []string{`brain.yaml:1:14: concurrency: want a whole number of at least 1 (got "lots")`},
		},
		{
			name: "every problem at once",
			file: "concurrency: 0\nengines: chat,gpu\nredis: http://x\n",
			want: []string{
				"brain.yaml:1:14: concurrency:",
				`brain.yaml:2:10: engines: unknown engine "gpu"`,
				"brain.yaml:3:8: redis: want a redis:// or redis+cluster:// URL",
			},
		},
		{
			name: "repeated key",
			file: "listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n",
			want: []string{"brain.yaml:2:1: listen: repeated (first at line 1); keep one"},
		},
		{
			name: "list for a single value",
			file: "listen: [a, b]\n",
			want: []string{"brain.yaml:1:9: listen: want a single value, not a list"},
		},
		{
			name: "empty value",
			file: "listen:\n",
			want: []string{"brain.yaml:1:8: listen: want a value"},
		},
		{
			name: "not a mapping",
			file: "- listen\n",
			want: []string{"brain.yaml:1:1: (top level): want a mapping"},
		},
		{
			name: "invalid YAML",
			file: "listen: 127.0.0.1:8080\n  redis: [\n",
			want: []string{"brain.yaml:2: invalid YAML"},
		},
		{
			name: "two documents",
			file: "listen: 127.0.0.1:1\n---\nlisten: 127.0.0.1:2\n",
			want: []string{"brain.yaml:2:1: a second YAML document; keep one"},
		},
		{
			name: "bad role",
			file: "auth:\n  tokens:\n    - name: alice\n      role: boss\n      sha256: " + secretHash + "\n",
			want: []string{`brain.yaml:4:13: auth.tokens[0].role: want user, operator or admin (got "boss")`},
		},
		{
			name: "plain token",
			file: "auth:\n  tokens:\n    - {name: alice, role: user, token: hunter2}\n",
			want: []string{
				"brain.yaml:3:33: auth.tokens[0].token: plain tokens are never stored",
				"brain.yaml:3:7: auth.tokens[0]: sha256: required",
			},
		},
		{
			name: "bad hash",
			file: "auth:\n  tokens:\n    - {name: alice, role: user, sha256: abc}\n",
			want: []string{"brain.yaml:3:41: auth.tokens[0].sha256: want the 64 hex digits"},
		},
		{
			name: "repeated token name",
			file: "auth:\n  tokens:\n    - {name: a, role: user, sha256: " + secretHash + "}\n    - {name: a, role: admin, sha256: " + strings.Repeat("0", 64) + "}\n",
			want: []string{`brain.yaml:4:14: auth.tokens[1].name: "a" is already the name of another token`},
		},
		{
			name: "tokens not a list",
			file: "auth:\n  tokens: alice\n",
			want: []string{"brain.yaml:2:11: auth.tokens: want a list of {name, role, sha256}"},
		},
		{
			name: "providers not a list",
			file: "providers: {name: local}\n",
			want: []string{"brain.yaml:1:12: providers: want a list of {name, type, base_url, api_key_env, model, max_attempts, max_context_tokens}"},
		},
		{
			name: "unknown provider type",
			file: "providers:\n  - {name: mis, type: mistral, api_key_env: MISTRAL_API_KEY}\n",
			env:  map[string]string{"MISTRAL_API_KEY": "m-1"},
			want: []string{`brain.yaml:2:23: providers[0].type: unknown provider type "mistral"; want openai`},
		},
		{
			name: "repeated and reserved provider names",
			file: "providers:\n  - {name: local, type: openai, base_url: http://127.0.0.1:1/v1}\n  - {name: local, type: openai, base_url: http://127.0.0.1:2/v1}\n  - {name: default, type: openai, base_url: http://127.0.0.1:3/v1}\n  - {name: My Server, type: openai, base_url: http://127.0.0.1:4/v1}\n",
			want: []string{
				`brain.yaml:3:12: providers[1].name: "local" is already the name of providers[0]; names must be unique`,
				`brain.yaml:4:12: providers[2].name: "default" is reserved`,
				`brain.yaml:5:12: providers[3].name: want lowercase letters`,
			},
		},
		{
			name: "provider without base_url nor key",
			file: "providers:\n  - name: ollama\n    type: openai\n",
			want: []string{"brain.yaml:2:5: providers[0]: base_url: required for an OpenAI-compatible server"},
		},
		{
			name: "provider without name and type",
			file: "providers:\n  - base_url: http://127.0.0.1:1/v1\n",
			want: []string{"brain.yaml:2:5: providers[0]: name: required", "brain.yaml:2:5: providers[0]: type: required"},
		},
		{
			name:    "a key in the file",
			file:    "providers:\n  - {name: openai, type: openai, api_key: sk-in-the-file}\n",
			want:    []string{"brain.yaml:2:34: providers[0].api_key: keys never go in the file: export the key in an environment variable and put the variable's name in api_key_env"},
			notWant: []string{"sk-in-the-file"},
		},
		{
			name:    "a key where its variable's name belongs",
			file:    "providers:\n  - {name: openai, type: openai, api_key_env: sk-proj-abc123}\n",
			want:    []string{"brain.yaml:2:47: providers[0].api_key_env: want the name of the environment variable that holds the key"},
			notWant: []string{"sk-proj-abc123"},
		},
		{
			name: "unset key variable",
			file: "providers:\n  - {name: openai, type: openai, api_key_env: MY_OPENAI_KEY}\n",
			env:  map[string]string{"MY_OPENAI_KEY": ""},
			want: []string{"brain.yaml:2:47: providers[0].api_key_env: $MY_OPENAI_KEY is not set or is empty"},
		},
		{
			name:    "key with a newline",
			file:    "providers:\n  - {name: openai, type: openai, api_key_env: MY_OPENAI_KEY}\n",
			env:     map[string]string{"MY_OPENAI_KEY": "sk-newline\n"},
			want:    []string{"providers[0].api_key_env: $MY_OPENAI_KEY holds white space or control characters"},
			notWant: []string{"sk-newline"},
		},
		{
			name: "bad base URLs and attempts",
			file: "providers:\n" +
				"  - {name: a, type: openai, base_url: 127.0.0.1:11434}\n" +
				"  - {name: b, type: openai, base_url: \"http://me:hunter2@127.0.0.1/v1\"}\n" +
				"  - {name: c, type: openai, base_url: \"http://127.0.0.1/v1?x=1\"}\n" +
				"  - {name: d, type: openai, base_url: http://127.0.0.1/v1, max_attempts: 50}\n" +
				"  - {name: e, type: openai, base_url: http://127.0.0.1/v1, model: [a, b]}\n" +
				"  - {name: f, type: openai, base_url: http://127.0.0.1/v1, max_context_tokens: 512}\n",
			want: []string{
				"brain.yaml:2:39: providers[0].base_url: not a valid URL; want an absolute http or https URL",
				"brain.yaml:3:39: providers[1].base_url: must not hold a user or password",
				`brain.yaml:4:39: providers[2].base_url: must have no query or fragment (got "http://127.0.0.1/v1?x=1")`,
				`brain.yaml:5:74: providers[3].max_attempts: want a whole number from 1 (no retry) to 20 (got "50")`,
				"brain.yaml:6:67: providers[4].model: want a single value, not a list",
				`brain.yaml:7:80: providers[5].max_context_tokens: want the models' context window in tokens, a whole number from 1000 to 10000000 (got "512")`,
			},
			notWant: []string{"hunter2"},
		},
		{
			name:    "bad OPENAI_* variables",
			env:     map[string]string{"OPENAI_API_KEY": "sk-env key", "OPENAI_BASE_URL": "localhost:11434"},
			want:    []string{"OPENAI_BASE_URL: want an absolute http or https URL", "$OPENAI_API_KEY holds white space"},
			notWant: []string{"sk-env key"},
		},
		{
			name: "bad environment variable",
			env: map[string]string{"BRAIN_CONCURRENCY": "0", "BRAIN_MAX_BODY": "big", "BRAIN_RETAIN_FINISHED": "a month", "BRAIN_INBOX_LIMIT": "-5",
				"BRAIN_MAX_LOG_EVENTS": "50", "BRAIN_MAX_PROCESSES_PER_OWNER": "-1", "BRAIN_WAIT_REPLICAS": "some", "BRAIN_PARTITIONS": "48"},
			want: []string{`BRAIN_CONCURRENCY="0": want a whole number`, `BRAIN_MAX_BODY="big": want a size`,
				`BRAIN_RETAIN_FINISHED="a month": want a duration like 30d, 12h or 90m`,
				`BRAIN_INBOX_LIMIT="-5": want a whole number of messages, or 0 for no limit`,
				`BRAIN_MAX_LOG_EVENTS="50": want 0 to keep every event, or a whole number of events from 100 to 100000000`,
				`BRAIN_MAX_PROCESSES_PER_OWNER="-1": want a whole number of processes, or 0 for no limit`,
				`BRAIN_WAIT_REPLICAS="some": want a whole number of replicas, or 0 for none`,
				`BRAIN_PARTITIONS="48": want a power of two from 1 to 1024, like 64`},
		},
		{
			name: "bad log section",
			file: "log:\n  format: xml\n  level: loud\n  colour: yes\n",
			want: []string{
				`brain.yaml:2:11: log.format: want json or console (got "xml")`,
				`brain.yaml:3:10: log.level: want debug, info, warn or error (got "loud")`,
				"brain.yaml:4:3: log.colour: unknown field; want one of format, level",
			},
		},
		{
			name: "log not a mapping",
			file: "log: json\n",
			want: []string{"brain.yaml:1:6: log: want a mapping of format, level"},
		},
		{
			name: "log keys at the top level",
			file: "log_format: json\n",
			want: []string{"brain.yaml:1:1: log_format: unknown field"},
		},
		{
			name: "bad log variables and flag",
			env:  map[string]string{"BRAIN_LOG_FORMAT": "text", "BRAIN_LOG_LEVEL": "trace"},
			want: []string{`BRAIN_LOG_FORMAT="text": want json or console`, `BRAIN_LOG_LEVEL="trace": want debug, info, warn or error`},
		},
		{
			name: "bad log flag",
			args: []string{"--log-level", "fatal"},
			want: []string{`invalid value "fatal" for flag -log-level: want debug, info, warn or error`},
		},
		{
			name: "bad OTEL_* variables",
			env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
				"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "yes please"},
			want: []string{`OTEL_EXPORTER_OTLP_PROTOCOL="grpc": brain exports OTLP over HTTP only`,
				`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/json"`,
				`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="yes please": want true or false`},
		},
		{
			name: "bad flag",
			args: []string{"--engines", "gpu"},
			want: []string{`invalid value "gpu" for flag -engines: unknown engine "gpu"`},
		},
		{
			name: "replicas of the embedded Redis",
			args: []string{"--wait-replicas", "1"},
			want: []string{"wait_replicas 1: the embedded Redis has no replicas; give --redis a server that has"},
		},
		{
			name: "bad listen flag",
			args: []string{"--listen", "8080"},
			want: []string{`invalid value "8080" for flag -listen: want host:port`},
		},
		{
			name: "sentinel URL without a master",
			args: []string{"--redis", "redis://127.0.0.1:26379/0?master_name="},
			want: []string{`invalid value "redis://127.0.0.1:26379/0?master_name=" for flag -redis: want a redis:// or redis+cluster:// URL or "embedded" (master_name is empty: name the master the sentinels monitor)`},
		},
		{
			name: "bad metrics address",
			args: []string{"--metrics-listen", "9090"},
			want: []string{`invalid value "9090" for flag -metrics-listen: want host:port, like 127.0.0.1:9090`},
		},
		{
			name: "bad affinity wait",
			args: []string{"--affinity-wait", "-5ms"},
			want: []string{`invalid value "-5ms" for flag -affinity-wait: want a duration from 0 to 1m, like 25ms, or 0 for no affinity`},
		},
		{
			name: "argument",
			args: []string{"now"},
			want: []string{`unexpected argument "now"`},
		},
		{
			name: "missing config file",
			args: []string{"--config", filepath.Join(t.TempDir(), "nope.yaml")},
			want: []string{"config file: open ", "nope.yaml: no such file or directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			if tt.file != "" {
				env["BRAIN_CONFIG"] = writeConfig(t, tt.file)
			}
			_, err := loadServeConfig(tt.args, envOf(env), io.Discard)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error shows %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"1": 1, "4096": 4096, "64KiB": 64 << 10, "2MiB": 2 << 20, "1 MiB": 1 << 20, "3GiB": 3 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1GB", "KiB", "1.5MiB", "99999999999MiB", "2048GiB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseRetention(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"0": 0, "0d": 0, "30d": 720 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute, "1h30m": 90 * time.Minute} {
		if got, err := parseRetention(in); err != nil || got != want {
			t.Errorf("parseRetention(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-1h", "-2d", "1.5d", "30 days", "1h30d", "99999d"} {
		if got, err := parseRetention(in); err == nil {
			t.Errorf("parseRetention(%q) = %s, want an error", in, got)
		}
	}
}
