// Package toolset turns a recipe's tool pool into a tool registry: the
// built-in tools from a catalog, the tools of the recipe's MCP servers
// through an MCP pool (Builder), and a Cache that builds each recipe's
// registry once. Engines get the registry; they never see the MCP client.
package toolset
