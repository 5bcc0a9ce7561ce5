package store

import (
	"embed"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the Lua scripts of a Store. Each is the shared prelude
// followed by one script file, so the wake rule, the post semantics, the
// lifecycle subset and the key layout exist once on the Lua side. They run
// with EVALSHA, falling back to EVAL (which loads them) the first time a
// server does not know them.
type scripts struct {
	create, post, claim, checkpoint, renew, release, commit, transition,
	list, putTimer, dueTimers, fireTimer *redis.Script
}

// prelude is the Lua every script starts with: the event templates as the
// constant table TPL, then lua/prelude.lua.
func prelude(t templates) string {
	var b strings.Builder
	b.WriteString("-- The events scripts write themselves (store/event.go templates).\nlocal TPL = {\n")
	for _, kv := range [][2]string{
		{"unblock", t.unblock}, {"turn_start", t.turnStart}, {"wake", t.wake},
		{"recover", t.recover}, {"inbox", t.inbox}, {"change", t.change},
	} {
		fmt.Fprintf(&b, "  %s = %s,\n", kv[0], luaString(kv[1]))
	}
	b.WriteString("}\n")
	b.WriteString(mustRead("lua/prelude.lua"))
	return b.String()
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

func newScripts(t templates) *scripts {
	pre := prelude(t)
	load := func(name string) *redis.Script {
		return redis.NewScript(pre + "\n" + mustRead("lua/"+name+".lua"))
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
		list:       load("list"),
		putTimer:   load("put_timer"),
		dueTimers:  load("due_timers"),
		fireTimer:  load("fire_timer"),
	}
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
