package store

import (
	"embed"

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

// prelude is the Lua every script starts with.
func prelude() string { return mustRead("lua/prelude.lua") }

func newScripts() *scripts {
	pre := prelude()
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
