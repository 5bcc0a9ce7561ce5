package lifecycle_test

import (
	"context"
	"testing"

	"github.com/engine-brain/brain/lifecycle"
)

// BenchmarkBuildAndFire measures what a transition costs a caller: build a
// machine from a stored status and fire one event.
func BenchmarkBuildAndFire(b *testing.B) {
	ctx := context.Background()
	st := lifecycle.Status{State: lifecycle.Ready}
	b.ReportAllocs()
	for b.Loop() {
		m, err := lifecycle.New(st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Fire(ctx, lifecycle.Wake, "node:n1", at); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCan measures a permission check from a stored status.
func BenchmarkCan(b *testing.B) {
	st := lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Running}
	b.ReportAllocs()
	for b.Loop() {
		if !lifecycle.Can(st, lifecycle.Resume) {
			b.Fatal("Can(resume) = false")
		}
	}
}
