package store

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the Lua scripts of a Store. Each is the shared prelude
// followed by one script file, so the wake rule, the post semantics, the
// lifecycle subset and the key layout exist once on the Lua side.
type scripts struct {
	create, post, claim, checkpoint, renew, release, commit, transition,
	putTimer, dueTimers, fireTimer, delete, steal, trimWakes *script
}

// prelude is the Lua every script starts with: the event templates as the
// constant table TPL, then lua/prelude.lua, lua/lifecycle.lua and
// lua/inbox.lua, in this order: each part uses only what those before it
// define (they are Lua locals). A template's parts alternate
// literal JSON and placeholders, each the position of its value in
// templateValues (0: the time).
func prelude(t templates, cluster bool) string {
	var b strings.Builder
	// Only a Cluster's nodes wait on the bell keys (bell.go): on one Redis
	// they block on the wake streams, and a write of a bell key would be
	// lost work.
	fmt.Fprintf(&b, "-- Whether the bell keys are rung (store/bell.go).\nlocal BELL = %t\n", cluster)
	b.WriteString("-- The events scripts write themselves (store/event.go templates).\nlocal TPL = {\n")
	for _, name := range slices.Sorted(maps.Keys(t.json)) {
		fmt.Fprintf(&b, "  %s = {", name)
		for i, part := range templateParts(t.json[name]) {
			if i > 0 {
				b.WriteString(", ")
			}
			if i%2 == 0 {
				b.WriteString(luaString(part))
			} else {
				fmt.Fprint(&b, slices.Index(templateValues[name], part)+1) // "at" is not there: 0
			}
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	for _, name := range []string{"lua/prelude.lua", "lua/lifecycle.lua", "lua/inbox.lua"} {
		b.WriteString(mustRead(name))
		b.WriteString("\n")
	}
	b.WriteString("-- ----- end of prelude -----\n")
	return b.String()
}

// templateParts splits the JSON of a template at its placeholders: literal
// JSON and placeholder names alternate, starting and ending with literal
// JSON, so that the prelude's render only concatenates.
func templateParts(json string) []string {
	const open = `"\u0000` // a placeholder is a JSON string: `"\u0000name"`
	var parts []string
	for {
		i := strings.Index(json, open)
		if i < 0 {
			return append(parts, json)
		}
		name, rest, _ := strings.Cut(json[i+len(open):], `"`)
		parts = append(parts, json[:i], name)
		json = rest
	}
}

// luaString returns s as a Lua long string literal, which takes its bytes
// as they are: [[...]], with as many = as keep s from closing it early.
// Lua drops a newline right after the opening bracket, so one is added.
func luaString(s string) string {
	eq := ""
	for strings.Contains(s+"]", "]"+eq+"]") {
		eq += "="
	}
	return "[" + eq + "[\n" + s + "]" + eq + "]"
}

// names are the script files, in the order of the library's functions.
var names = []string{"create", "post", "claim", "checkpoint", "renew", "release", "commit",
	"transition", "put_timer", "due_timers", "fire_timer", "delete", "steal", "trim_wakes"}

func newScripts(t templates, cluster bool) *scripts {
	pre := prelude(t, cluster)
	bodies := make(map[string]string, len(names))
	for _, name := range names {
		bodies[name] = mustRead("lua/" + name + ".lua")
	}
	lib := newLibrary(pre, bodies)
	load := func(name string) *script {
		src := pre + "\n" + bodies[name]
		sum := sha1.Sum([]byte(src))
		return &script{lib: lib, fn: lib.name + "_" + name, src: src, sha: hex.EncodeToString(sum[:])}
	}
	return &scripts{
		create:     load("create"),
		post:       load("post"),
		claim:      load("claim"),
		checkpoint: load("checkpoint"),
		renew:      load("renew"),
		release:    load("release"),
		commit:     load("commit"),
		transition: load("transition"),
		putTimer:   load("put_timer"),
		dueTimers:  load("due_timers"),
		fireTimer:  load("fire_timer"),
		delete:     load("delete"),
		steal:      load("steal"),
		trimWakes:  load("trim_wakes"),
	}
}

// A library is the scripts as one Redis function library: the prelude runs
// once, when the library loads, instead of at every call as it does for an
// EVAL script (measured with brain bench: Redis CPU per turn −7 %). Its
// name carries a hash of its code, so nodes of different versions sharing
// a Redis each call their own.
type library struct {
	name, code string
	// evalOnly is set once the server turned out to have no functions
	// (before Redis 7, the embedded miniredis) or to deny them (ACL):
	// scripts run with EVAL from then on.
	evalOnly atomic.Bool
	// loading lets one call load the library at a time; loads counts the
	// loads made, so that the calls that found it missing meanwhile do not
	// load it again (on a Cluster each load is one per master).
	loading sync.Mutex
	loads   atomic.Int64
}

func newLibrary(pre string, bodies map[string]string) *library {
	var fns strings.Builder
	for _, name := range names {
		fmt.Fprintf(&fns, "redis.register_function('%%LIB%%_%s', function(KEYS, ARGV)\n%s\nend)\n", name, bodies[name])
	}
	sum := sha1.Sum([]byte(pre + fns.String()))
	name := "brain_" + hex.EncodeToString(sum[:6])
	return &library{
		name: name,
		code: "#!lua name=" + name + "\n" + pre + "\n" + strings.ReplaceAll(fns.String(), "%LIB%", name),
	}
}

// loadOnce loads the library unless a load was made since the caller saw
// loads of them (it found the library missing before that load).
func (l *library) loadOnce(ctx context.Context, rdb redis.UniversalClient, loads int64) error {
	l.loading.Lock()
	defer l.loading.Unlock()
	if l.loads.Load() != loads {
		return nil
	}
	if err := l.load(ctx, rdb); err != nil {
		return err
	}
	l.loads.Add(1)
	return nil
}

// load loads the library into the server, into every master of a
// Cluster (a replica gets it from its master); one that is there already
// (a node of the same version was first) is fine.
func (l *library) load(ctx context.Context, rdb redis.UniversalClient) error {
	load := func(ctx context.Context, rdb redis.UniversalClient) error {
		err := rdb.FunctionLoad(ctx, l.code).Err()
		if err != nil && !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("load the Lua library %s: %w", l.name, err)
		}
		return nil
	}
	if c, ok := rdb.(*redis.ClusterClient); ok {
		return c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return load(ctx, m) })
	}
	return load(ctx, rdb)
}

// A script runs as a function of its library (FCALL), loading the library
// the first time the server lacks it, or as an EVAL script (EVALSHA, and
// EVAL to load it) on a server without functions, that denies them or
// refuses the library.
type script struct {
	lib *library
	fn  string
	// src is the script as an EVAL script, sha its SHA-1 (EVALSHA).
	src, sha string
}

// Run runs the script with keys and args, its function through b.
func (sc *script) Run(ctx context.Context, b *batcher, keys []string, args ...any) *redis.Cmd {
	return sc.RunThen(ctx, b, nil, keys, args...)
}

// RunThen is Run followed by the commands of then, sent right after the
// script (in the same pipeline when it runs as a function): they see what
// it wrote, cost no round trip of their own, and their replies do not pass
// through Lua, which costs Redis far more than the commands themselves
// (a stream entry read into Lua: ~8 µs of server CPU, measured with
// BenchmarkTurnServerCPU). They are not atomic with it: another client may
// write in between. Each has its own reply or error.
func (sc *script) RunThen(ctx context.Context, b *batcher, then []redis.Cmder, keys []string, args ...any) *redis.Cmd {
	if sc.lib.evalOnly.Load() {
		return sc.evalThen(ctx, b, then, keys, args)
	}
	loads := sc.lib.loads.Load()
	cmd := sc.fcall(ctx, b, then, keys, args)
	err := cmd.Err()
	switch {
	case err == nil:
		return cmd
	case strings.HasPrefix(err.Error(), "ERR Function not found"):
		err := sc.lib.loadOnce(ctx, b.rdb, loads)
		if err == nil {
			return sc.fcall(ctx, b, then, keys, args)
		}
		var refused redis.Error
		if !errors.As(err, &refused) {
			cmd.SetErr(err) // the connection's: try again next time
			return cmd
		}
	case !noFunctions(err):
		return cmd // the script's own error, or the connection's
	}
	sc.lib.evalOnly.Store(true)
	return sc.evalThen(ctx, b, then, keys, args)
}

// evalThen runs the script as an EVAL script through b (EVALSHA, and EVAL
// when the server lacks it), then the commands of then.
func (sc *script) evalThen(ctx context.Context, b *batcher, then []redis.Cmder, keys []string, args []any) *redis.Cmd {
	call := func(name, body string) *redis.Cmd {
		cmdArgs := make([]any, 0, 3+len(keys)+len(args))
		cmdArgs = append(cmdArgs, name, body, len(keys))
		for _, k := range keys {
			cmdArgs = append(cmdArgs, k)
		}
		cmd := redis.NewCmd(ctx, append(cmdArgs, args...)...)
		_ = b.do(ctx, append([]redis.Cmder{cmd}, then...)...)
		return cmd
	}
	cmd := call("evalsha", sc.sha)
	if err := cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		cmd = call("eval", sc.src)
	}
	return cmd
}

// fcall calls the script's function (FCALL) through b, as rdb.FCall would,
// and the commands of then right after it.
func (sc *script) fcall(ctx context.Context, b *batcher, then []redis.Cmder, keys []string, args []any) *redis.Cmd {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, "fcall", sc.fn, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	cmd := redis.NewCmd(ctx, append(cmdArgs, args...)...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3) // a cluster client routes by the first key
	}
	_ = b.do(ctx, append([]redis.Cmder{cmd}, then...)...)
	return cmd
}

// noFunctions reports whether err says the server has no functions or does
// not let us use them.
func noFunctions(err error) bool {
	msg := strings.ToLower(err.Error())
	about := strings.Contains(msg, "fcall") || strings.Contains(msg, "function")
	return about && (strings.HasPrefix(msg, "noperm") || strings.HasPrefix(msg, "err unknown command"))
}

// mustRead reads an embedded file; they are part of the binary, so a
// missing one is a build mistake.
func mustRead(name string) string {
	b, err := luaFiles.ReadFile(name)
	if err != nil {
		panic("store: embedded script missing: " + name)
	}
	return string(b)
}
