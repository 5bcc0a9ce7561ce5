package main

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metricsRegistry is the registry /metrics serves, the server's own (not
// the global default one): the Go runtime and process collectors and the
// build's information; the node and the API add their metrics.
func metricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo(),
	)
	return reg
}

// buildInfo is brain_build_info, 1 with the build in its labels, so that a
// query can tell which versions the nodes run (count by (version)) or join
// it to other metrics.
func buildInfo() prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "brain_build_info",
		Help: "1, labelled with the version and revision brain was built from and the Go version.",
		ConstLabels: prometheus.Labels{
			"version":  binaryVersion(),
			"revision": binaryRevision(),
			"go":       runtime.Version(),
		},
	})
	g.Set(1)
	return g
}
