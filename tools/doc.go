// Package tools owns the tool interface, the registry a recipe's tool list
// builds, argument checks against each tool's JSON Schema, and the built-in
// tools. It knows the conversation's content blocks and nothing of Redis,
// HTTP or the lifecycle.
package tools
