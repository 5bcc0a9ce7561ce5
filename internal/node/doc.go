// Package node is what a brain node does: it reads wakes (wakes.go), claims
// a process and its history (turn.go, readback.go, histories.go), runs the
// turn on the engine of the recipe's kind with a checkpoint after each
// round, commits, keeps the running turns' leases (leases.go), fires timers
// (timers.go), spawns workers (spawn.go) and tends the shared Redis
// (node.go's maintenance loops). It publishes the live progress of its
// turns (live.go) and carries that of the processes watched on it, from
// whichever node runs them, to Watch (watch.go). It shows what it does as OpenTelemetry
// spans (trace.go: a trace per turn, linked to what posted its messages;
// model_call.go: model calls, with the GenAI metrics) and Prometheus
// metrics (metrics.go; processes_gauge.go, published by one node). It talks
// to Redis only through package store; the root package brain names its
// types for embedders.
//
// See docs/ARCHITECTURE.md for the walk of one message and the races.
package node
