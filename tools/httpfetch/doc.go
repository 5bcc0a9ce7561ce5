// Package httpfetch is the http_fetch built-in tool: it GETs a text
// document (HTML as readable text, JSON, XML, plain text) over a client
// that refuses private and loopback addresses, within a recipe's
// allow_hosts. It lives apart from package tools so that the packages that
// import tools (engines, recipes) pull in no HTTP client; tools/toolset's
// Builtins puts it in the built-in catalog.
package httpfetch
