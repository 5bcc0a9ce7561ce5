package api

import (
	_ "embed"
	"net/http"
)

// openAPIDocument is the OpenAPI 3.1 description of the API, written by
// hand; TestOpenAPI holds it to the route table and every API test's
// answers to it.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPI serves the API's description, without a token.
func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDocument)
}
