package main

import (
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// /metrics has brain_build_info: 1, with the binary's version, revision and
// Go in its labels.
func TestBuildInfo(t *testing.T) {
	t.Parallel()
	families, err := metricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "brain_build_info" {
			continue
		}
		if len(f.GetMetric()) != 1 {
			t.Fatalf("brain_build_info has %d series, want 1", len(f.GetMetric()))
		}
		m := f.GetMetric()[0]
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		want := map[string]string{"version": binaryVersion(), "revision": binaryRevision(), "go": runtime.Version()}
		if diff := cmp.Diff(want, labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if v := m.GetGauge().GetValue(); v != 1 {
			t.Errorf("brain_build_info is %v, want 1", v)
		}
		return
	}
	t.Error("no brain_build_info")
}
