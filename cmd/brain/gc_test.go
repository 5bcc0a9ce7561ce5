package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC is not parallel: GOGC is process-wide.
func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	if got := tuneGC(func(string) string { return "" }); got != nodeGCPercent {
		t.Errorf("tuneGC without GOGC = %d, want %d", got, nodeGCPercent)
	}
	if got := debug.SetGCPercent(100); got != nodeGCPercent {
		t.Errorf("GOGC in force = %d, want %d", got, nodeGCPercent)
	}

	// An operator's GOGC (the runtime read it at start) is left alone.
	env := map[string]string{"GOGC": "150"}
	debug.SetGCPercent(150)
	if got := tuneGC(func(k string) string { return env[k] }); got != 150 {
		t.Errorf("tuneGC with GOGC=150 = %d, want 150 left alone", got)
	}
	if got := debug.SetGCPercent(100); got != 150 {
		t.Errorf("GOGC in force = %d, want 150", got)
	}
}
