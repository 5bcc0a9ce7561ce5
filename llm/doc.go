// Package llm is the provider-neutral model interface: a Request built from
// the conversation's provider view, and a streamed response of Parts.
// Adapters for real providers live in sub-packages and translate both to
// their wire formats; llm/scripted plays a YAML script for tests and demos.
// The package knows conversation types and nothing of Redis, HTTP, tools or
// the lifecycle.
package llm
