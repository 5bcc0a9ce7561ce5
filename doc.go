// Package brain runs LLM agent engine processes: a Node wires the store, the
// wake queue, the timers, the engines and the tools of one node. Any number
// of nodes share one Redis; a process runs on one node at a time, and the
// work of a node that dies is taken over by the others.
//
// It is also the embedding API for Go programs: build a Node with New,
// Start it, create processes and post messages to them.
package brain
