package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/web"
)

// emptyNode is an api.Backend with no processes; the methods the test does
// not reach are left to the nil interface it embeds.
type emptyNode struct{ api.Backend }

func (emptyNode) List(context.Context, lifecycle.State, string, int) ([]store.Record, string, error) {
	return nil, "", nil
}

func (emptyNode) ListOwned(context.Context, string, lifecycle.State, string, int) ([]store.Record, string, error) {
	return nil, "", nil
}

func (emptyNode) Ping(context.Context) error { return nil }

// TestMount checks that brain serve's handler serves the console at / and
// its assets, while the API keeps /v1, its probes and its auth.
func TestMount(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	apiHandler, err := api.New(api.Config{
		Backend: emptyNode{},
		Tokens:  []api.Token{{Name: "alice", Role: api.RoleUser, SHA256: api.HashToken(token)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	console, err := web.New(web.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mount(apiHandler, console))
	t.Cleanup(srv.Close)

	tests := []struct {
		name, method, path, auth string
		status                   int
		ctype, contains          string
	}{
		{"console page", "GET", "/", "", 200, "text/html; charset=utf-8", "<title>brain console</title>"},
		{"console script", "GET", "/console/app.js", "", 200, "text/javascript; charset=utf-8", "/v1/processes"},
		{"markdown", "POST", "/console/api/markdown", "", 200, "application/json", `\u003ctable\u003e`},
		{"API without a token", "GET", "/v1/processes", "", 401, "application/json", "unauthorized"},
		{"API with a token", "GET", "/v1/processes", "Bearer " + token, 200, "application/json", `"processes":[]`},
		{"unknown API route", "GET", "/v1/nope", "Bearer " + token, 404, "application/json", "no route"},
		{"healthz", "GET", "/healthz", "", 200, "application/json", "ok"},
		{"the API's description", "GET", "/openapi.json", "", 200, "application/json", `"openapi": "3.1.0"`},
		{"unknown page", "GET", "/nope", "", 404, "text/plain; charset=utf-8", "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body io.Reader
			if tt.method == "POST" {
				body = strings.NewReader(`{"markdown": "| a | b |\n|---|---|\n| 1 | 2 |"}`)
			}
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tt.status {
				t.Errorf("%s %s: status %d, want %d: %s", tt.method, tt.path, res.StatusCode, tt.status, b)
			}
			if got := res.Header.Get("Content-Type"); !strings.HasPrefix(got, tt.ctype) {
				t.Errorf("%s %s: Content-Type %q, want %q", tt.method, tt.path, got, tt.ctype)
			}
			if !strings.Contains(string(b), tt.contains) {
				t.Errorf("%s %s: body lacks %q: %s", tt.method, tt.path, tt.contains, b)
			}
			isConsole := !strings.HasPrefix(tt.path, "/v1/") && tt.path != "/healthz" && tt.path != "/openapi.json"
			if got := res.Header.Get("Content-Security-Policy") != ""; got != isConsole {
				t.Errorf("%s %s: Content-Security-Policy set: %v, want %v", tt.method, tt.path, got, isConsole)
			}
		})
	}
}
