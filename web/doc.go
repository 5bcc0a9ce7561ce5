// Package web is the operator console of brain: a page, a script and a
// style sheet embedded in the binary, and the one server-side helper the
// page needs, a markdown renderer (POST /console/api/markdown).
//
// The console is a client of the JSON API (/v1): it owns no process state
// and enforces no roles; the API does both. It must not know the API's
// internals, only its wire format.
//
// No text from a model reaches the page as markup: the script inserts model
// text with textContent, and markdown goes through the renderer here, which
// drops raw HTML and every link that is not http(s) or a path of this
// server. The Content-Security-Policy header forbids inline scripts and
// styles and any origin but this one, in case something slips through.
package web
