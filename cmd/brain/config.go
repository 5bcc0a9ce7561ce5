package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/llm/providers"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// embeddedRedis is the --redis value that runs miniredis inside the process.
const embeddedRedis = "embedded"

// defaultConfigFile is read when it exists and no other file is named.
const defaultConfigFile = "brain.yaml"

// serveConfig is what `brain serve` runs with. Each source overrides the one
// before it: the defaults, the config file, BRAIN_* environment variables,
// flags.
type serveConfig struct {
	Listen        string
	MetricsListen string // where /metrics is served instead of with the API; "" with it
	Redis         string // embeddedRedis or a redis:// (or redis+cluster://) URL
	Recipes       string // a directory added to the built-in recipes; "" for none
	Concurrency   int
	NodeID        string // "" lets the node make one up
	Engines       []string
	InsecureOpen  bool
	MaxBody       int64
	// HistoryMemory bounds the logs the node keeps (brain.Config.HistoryBytes).
	HistoryMemory int64
	// RetainFinished is brain.Config.RetainFinished; 0 keeps finished
	// processes.
	RetainFinished time.Duration
	// InboxLimit is brain.Config.InboxLimit, except that 0 means no limit.
	InboxLimit int
	// MaxLogEvents is brain.Config.MaxLogEvents; 0 keeps every event.
	MaxLogEvents int
	// MaxProcessesPerOwner is brain.Config.OwnerLimit; 0 is no limit.
	MaxProcessesPerOwner int
	// WaitReplicas is brain.Config.WaitReplicas; 0 waits for none.
	WaitReplicas int
	// Partitions is brain.Config.Partitions; 0 is the default.
	Partitions int
	// AffinityWait is brain.Config.AffinityWait, except that 0 means no
	// affinity.
	AffinityWait time.Duration
	// Tokens come from the config file only (auth.tokens), as hashes.
	Tokens []api.Token
	// Providers come from the config file (providers), or else from the
	// OPENAI_*, ANTHROPIC_* and GEMINI_* variables (providers.FromEnv);
	// the first is the default.
	Providers []providers.Config
	// Log is how the node logs: flags, BRAIN_LOG_* or the file's log
	// section.
	Log logOptions
	// Telemetry comes from the OTEL_* variables only (otel.go).
	Telemetry telemetryConfig
	// File is the config file that was read, or "".
	File string
}

// builtinEngines are the engine kinds brain serve runs.
var builtinEngines = brain.DefaultEngines(nil)

func defaultServeConfig() serveConfig {
	return serveConfig{
		Listen:       "127.0.0.1:8080",
		Redis:        embeddedRedis,
		Concurrency:  8,
		Engines:      builtinEngines.Names(),
		MaxBody:      api.DefaultMaxBody,
		InboxLimit:   store.DefaultInboxLimit,
		AffinityWait: brain.DefaultAffinityWait,
		Log:          defaultLogOptions(),
		// HistoryMemory: brain.Config's default.
	}
}

// nodeInboxLimit is the inbox limit as brain.Config takes it: there 0 is
// the default and -1 none; here 0 is none, as people write it.
func (c serveConfig) nodeInboxLimit() int {
	if c.InboxLimit == 0 {
		return -1
	}
	return c.InboxLimit
}

// nodeAffinityWait is the affinity wait as brain.Config takes it: there 0
// is the default and a negative wait none; here 0 is none.
func (c serveConfig) nodeAffinityWait() time.Duration {
	if c.AffinityWait == 0 {
		return -1
	}
	return c.AffinityWait
}

// setting is one value that a flag, an environment variable and a key of
// the config file can all give. Every source goes through the same set, so
// a value means the same wherever it is written.
type setting struct {
	name string // the flag; the file key is the same with _ for -
	// section, when set, is the mapping of the file that holds the key,
	// which is then the name without "section-": log.format for
	// log-format.
	section string
	usage   string
	isBool  bool
	set     func(c *serveConfig, v string) error
}

func (s setting) key() string { return strings.ReplaceAll(s.name, "-", "_") }
func (s setting) env() string { return "BRAIN_" + strings.ToUpper(s.key()) }

// fileKey is the key of s in its mapping of the config file.
func (s setting) fileKey() string { return strings.TrimPrefix(s.key(), s.section+"_") }

// flagValue is a flag's value, checked when parsed and applied after the
// config file and the environment.
type flagValue struct {
	s setting
	v string
}

// logSettings are also flags of brain itself, before the command, for
// every command (commandLog); brain serve takes those as its own.
var logSettings = []setting{
	{name: "log-format", section: "log", usage: "`FORMAT`: json (one object a line, for a log collector) or console (default console)", set: func(c *serveConfig, v string) error {
		return c.Log.setFormat(v)
	}},
	{name: "log-level", section: "log", usage: "`LEVEL`: debug, info, warn or error (default info)", set: func(c *serveConfig, v string) error {
		return c.Log.setLevel(v)
	}},
}

var settings = slices.Concat([]setting{
	{name: "listen", usage: "`ADDRESS`: host:port to serve the HTTP API on (default 127.0.0.1:8080)", set: func(c *serveConfig, v string) error {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return fmt.Errorf("want host:port, like 127.0.0.1:8080 (%v)", err)
		}
		c.Listen = v
		return nil
	}},
	{name: "redis", usage: "`URL`: the Redis that keeps the state (redis://[user:password@]host:port/db, rediss://, unix://; through Redis Sentinel: redis://SENTINEL:26379/db?master_name=NAME, more sentinels as &addr=HOST:PORT; a Redis Cluster: redis+cluster://[user:password@]HOST:PORT[,HOST:PORT...], its nodes' addresses, rediss+cluster:// with TLS), or \"embedded\": an in-memory Redis inside the process, lost on exit (default embedded)", set: func(c *serveConfig, v string) error {
		if v != embeddedRedis {
			if _, err := parseRedisURL(v); err != nil {
				return fmt.Errorf("want a redis:// or redis+cluster:// URL or %q (%v)", embeddedRedis, err)
			}
		}
		c.Redis = v
		return nil
	}},
	{name: "recipes", usage: "`DIR`: a directory of recipe files (*.yaml) added to the built-in recipes; reloaded on SIGHUP", set: func(c *serveConfig, v string) error {
		c.Recipes = v
		return nil
	}},
	{name: "concurrency", usage: "`N`: the most turns this node runs at once (default 8)", set: func(c *serveConfig, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("want a whole number of at least 1 (got %q)", v)
		}
		c.Concurrency = n
		return nil
	}},
	{name: "node-id", usage: "`ID`: the name of this node in leases and logs (default hostname-pid-random)", set: func(c *serveConfig, v string) error {
		c.NodeID = v
		return nil
	}},
	{name: "engines", usage: "`LIST`: the engines this node runs, comma-separated: " + strings.Join(builtinEngines.Names(), ", ") + " (default all)", set: func(c *serveConfig, v string) error {
		var engines []string
		for e := range strings.SplitSeq(v, ",") {
			e = strings.TrimSpace(e)
			if _, ok := builtinEngines.Get(recipes.Engine(e)); !ok {
				return fmt.Errorf("unknown engine %q; want some of %s, comma-separated", e, strings.Join(builtinEngines.Names(), ", "))
			}
			if !slices.Contains(engines, e) {
				engines = append(engines, e)
			}
		}
		c.Engines = engines
		return nil
	}},
	{name: "metrics-listen", usage: "`ADDRESS`: serve /metrics on this host:port instead of with the API (127.0.0.1:9090, say), so that only who reaches it sees the node's figures", set: func(c *serveConfig, v string) error {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return fmt.Errorf("want host:port, like 127.0.0.1:9090 (%v)", err)
		}
		c.MetricsListen = v
		return nil
	}},
	{name: "insecure-open", isBool: true, usage: "serve without auth tokens on a non-loopback address: anyone who reaches it is admin", set: func(c *serveConfig, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false (got %q)", v)
		}
		c.InsecureOpen = b
		return nil
	}},
	{name: "max-body", usage: "`SIZE`: the largest request body the API accepts, in bytes or with a KiB, MiB or GiB suffix (default 64KiB)", set: setSize(func(c *serveConfig) *int64 { return &c.MaxBody })},
	{name: "history-memory", usage: "`SIZE`: the memory this node keeps recent conversation logs in, so that a turn reads only what is new of its log; with KiB, MiB or GiB (default 256MiB)", set: setSize(func(c *serveConfig) *int64 { return &c.HistoryMemory })},
	{name: "retain-finished", usage: "`DURATION`: delete DONE and FAILED processes, conversations included, once they have not changed for this long: 30d, 12h, 90m (default 0: keep them)", set: func(c *serveConfig, v string) error {
		d, err := parseRetention(v)
		if err != nil {
			return err
		}
		c.RetainFinished = d
		return nil
	}},
	{name: "inbox-limit", usage: fmt.Sprintf("`N`: the most messages a process's inbox holds; beyond it user and operator messages are refused (429 inbox_full) and timer ticks dropped, never a worker's result (default %d; 0: no limit)", store.DefaultInboxLimit), set: setCount(func(c *serveConfig) *int { return &c.InboxLimit }, "messages", "no limit")},
	{name: "wait-replicas", usage: "`N`: answer every write to Redis once N replicas have it (Redis WAIT, up to 1s), so that a failover loses nothing answered; a write they do not take in time fails as when Redis is unavailable (503; retried) (default 0: wait for none)", set: setCount(func(c *serveConfig) *int { return &c.WaitReplicas }, "replicas", "none")},
	{name: "partitions", usage: fmt.Sprintf("`N`: the number of partitions of the deployment's keys in Redis, a power of two up to %d, set when the deployment first runs; every node must give the deployment's number, and one that gives another refuses to start (default %d)", store.MaxPartitions, store.DefaultPartitions), set: func(c *serveConfig, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || store.CheckPartitions(n) != nil {
			return fmt.Errorf("want a power of two from 1 to %d, like %d (got %q)", store.MaxPartitions, store.DefaultPartitions, v)
		}
		c.Partitions = n
		return nil
	}},
	{name: "affinity-wait", usage: "`DURATION`: how long a wake waits for the node its stream is home to, which keeps the process's conversation in memory, before a node with a free slot takes it: 25ms, 100ms (default 25ms; 0: any node takes any wake at once)", set: func(c *serveConfig, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			return fmt.Errorf("want a duration from 0 to 1m, like 25ms, or 0 for no affinity (got %q)", v)
		}
		c.AffinityWait = d
		return nil
	}},
	{name: "max-processes-per-owner", usage: "`N`: the most processes one user may have, workers and finished ones included until deleted; beyond it a create is refused (429 process_limit) (default 0: no limit)", set: setCount(func(c *serveConfig) *int { return &c.MaxProcessesPerOwner }, "processes", "no limit")},
	{name: "max-log-events", usage: fmt.Sprintf("`N`: the most events a process's log keeps in Redis when its recipe sets no limits.max_log_events; a turn's commit deletes older ones for good (default 0: keep every event; else at least %d)", recipes.MinLogEvents), set: func(c *serveConfig, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n != 0 && (n < recipes.MinLogEvents || n > recipes.MaxLogEvents) {
			return fmt.Errorf("want 0 to keep every event, or a whole number of events from %d to %d (got %q)", recipes.MinLogEvents, recipes.MaxLogEvents, v)
		}
		c.MaxLogEvents = n
		return nil
	}},
}, logSettings)

// parseRetention reads a duration of Go's syntax (12h, 90m) or a whole
// number of days (30d); 0 is allowed.
func parseRetention(v string) (time.Duration, error) {
	bad := fmt.Errorf("want a duration like 30d, 12h or 90m, or 0 to keep finished processes (got %q)", v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*365 {
			return 0, bad
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}

// setCount is the set of a setting that is a whole number of what, 0
// meaning zero ("no limit", say): the value goes to the field that field
// returns.
func setCount(field func(*serveConfig) *int, what, zero string) func(*serveConfig, string) error {
	return func(c *serveConfig, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("want a whole number of %s, or 0 for %s (got %q)", what, zero, v)
		}
		*field(c) = n
		return nil
	}
}

// setSize is the set of a size setting: parseSize's value goes to the
// field that field returns.
func setSize(field func(*serveConfig) *int64) func(*serveConfig, string) error {
	return func(c *serveConfig, v string) error {
		n, err := parseSize(v)
		if err != nil {
			return err
		}
		*field(c) = n
		return nil
	}
}

// parseSize reads a positive byte count: 4096, 64KiB, 1MiB, 2GiB.
func parseSize(v string) (int64, error) {
	num, unit := v, int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if s, ok := strings.CutSuffix(v, u.suffix); ok {
			num, unit = strings.TrimSpace(s), u.n
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > (1<<40)/unit {
		return 0, fmt.Errorf("want a size like 1048576, 512KiB, 1MiB or 2GiB (got %q)", v)
	}
	return n * unit, nil
}

const serveUsage = `Usage:
  brain serve [--config FILE] [flags]

Runs a brain node with its HTTP API. Settings come from, each overriding the
one before: the defaults, the config file (--config FILE, or BRAIN_CONFIG, or
./brain.yaml when it exists), BRAIN_* environment variables (BRAIN_LISTEN,
BRAIN_REDIS, ... : the flag's name in upper case with _ for -), then flags.
The config file uses the flags' names with _ for - (node_id, max_body, ...)
and also holds the API tokens, as SHA-256 hashes (see brain token), and the
model providers, the first being the one recipes call "default":

  listen: 127.0.0.1:8080
  redis: redis://127.0.0.1:6379/0
  recipes: ./recipes            # relative to the file's directory
  log: {format: json, level: info}
  auth:
    tokens:
      - {name: alice, role: user, sha256: <brain token hash>}
  providers:                    # type openai: OpenAI and compatible servers
    - {name: ollama, type: openai, base_url: http://127.0.0.1:11434/v1, model: llama3.2}
    - {name: gpt, type: openai, api_key_env: OPENAI_API_KEY, model: gpt-4.1-mini}

api_key_env names the variable that holds a key; keys never go in the file.
Without a providers list, OPENAI_API_KEY and/or OPENAI_BASE_URL configure a
provider named openai; with no provider at all, a scripted demo model
answers. Without tokens the API is open (everyone is admin) and serves on a
loopback address only, unless --insecure-open. SIGHUP reloads the recipes
and the config file's tokens (its other settings take a restart).
OTEL_EXPORTER_OTLP_ENDPOINT, and the other OTEL_* variables, export traces
and metrics to an OpenTelemetry collector over OTLP/HTTP (README:
Operations).

Flags:
`

// loadServeConfig reads the settings of `brain serve` from its flags, the
// environment (lookupEnv) and the config file.
func loadServeConfig(args []string, lookupEnv func(string) (string, bool), stderr io.Writer) (serveConfig, error) {
	fs := flag.NewFlagSet("brain serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage)
		fs.PrintDefaults()
	}
	configFile := fs.String("config", "", "read settings and tokens from this YAML `FILE` (default ./brain.yaml when it exists; env BRAIN_CONFIG)")
	var flagged []flagValue
	for _, s := range settings {
		record := func(v string) error {
			var scratch serveConfig // checked now, applied after the file and the environment
			if err := s.set(&scratch, v); err != nil {
				return err
			}
			flagged = append(flagged, flagValue{s, v})
			return nil
		}
		if s.isBool {
			fs.BoolFunc(s.name, s.usage, record)
		} else {
			fs.Func(s.name, s.usage, record)
		}
	}
	if err := fs.Parse(args); err != nil {
		return serveConfig{}, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return serveConfig{}, fmt.Errorf("unexpected argument %q: settings are flags, like --listen 127.0.0.1:8080", fs.Arg(0))
	}

	c := defaultServeConfig()
	path := *configFile
	if path == "" {
		path, _ = lookupEnv("BRAIN_CONFIG")
	}
	if path == "" {
		if _, err := os.Stat(defaultConfigFile); err == nil {
			path = defaultConfigFile
		}
	}
	if path != "" {
		if err := readConfigFile(path, &c, lookupEnv); err != nil {
			return serveConfig{}, err
		}
		c.File = path
	}
	var errs []error
	for _, s := range settings {
		v, ok := lookupEnv(s.env())
		if !ok || v == "" {
			continue
		}
		if err := s.set(&c, v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", s.env(), v, err))
		}
	}
	tel, err := readTelemetryConfig(lookupEnv)
	if err != nil {
		errs = append(errs, err)
	}
	c.Telemetry = tel
	if len(c.Providers) == 0 {
		ps, err := providers.FromEnv(lookupEnv)
		if err != nil {
			errs = append(errs, err)
		}
		c.Providers = ps
	}
	if err := errors.Join(errs...); err != nil {
		return serveConfig{}, err
	}
	for _, f := range flagged {
		_ = f.s.set(&c, f.v) // checked when parsed
	}
	if c.WaitReplicas > 0 && c.Redis == embeddedRedis {
		return serveConfig{}, fmt.Errorf("wait_replicas %d: the embedded Redis has no replicas; give --redis a server that has", c.WaitReplicas)
	}
	return c, nil
}
