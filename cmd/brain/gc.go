package main

import "runtime/debug"

// nodeGCPercent is the GOGC a process that runs a node (serve, bench) uses
// unless the environment sets GOGC. A node's live heap is small (an idle
// process costs it nothing) while every turn allocates, so Go's default of
// 100 collects many times a second; measured with `brain bench`, 400 cuts
// the node's CPU per turn by about a tenth, for a heap that may grow to
// five times the live one before a collection.
const nodeGCPercent = 400

// tuneGC applies nodeGCPercent unless getenv("GOGC") is set, and returns
// the GOGC in force.
func tuneGC(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		percent := debug.SetGCPercent(100)
		debug.SetGCPercent(percent)
		return percent
	}
	debug.SetGCPercent(nodeGCPercent)
	return nodeGCPercent
}
