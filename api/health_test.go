package api

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// /readyz is 200 while the recipes are loaded and the node is not
// draining, whether Redis answers or not (the body says); /healthz is 200
// throughout, and the API serves while the node drains.
func TestReadyz(t *testing.T) {
	t.Parallel()
	down := errors.New("dial tcp 10.0.0.7:6379: connection refused")
	tests := []struct {
		name       string
		draining   bool
		pingErr    error
		noRecipes  bool
		wantStatus int
		wantBody   string
		wantWarned bool // the log says Redis does not answer
	}{
		{name: "ready", wantStatus: 200, wantBody: `{"status":"ready","redis":"ok"}`},
		{name: "Redis down", pingErr: down, wantStatus: 200, wantBody: `{"status":"ready","redis":"unavailable"}`, wantWarned: true},
		{name: "draining", draining: true, wantStatus: 503,
			wantBody: `{"error":{"code":"not_ready","message":"the node is draining"}}`},
		{name: "draining, Redis down", draining: true, pingErr: down, wantStatus: 503,
			wantBody: `{"error":{"code":"not_ready","message":"the node is draining"}}`},
		{name: "no recipes", noRecipes: true, wantStatus: 503,
			wantBody: `{"error":{"code":"not_ready","message":"no recipes are loaded"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.fake.pingErr = tt.pingErr
			if tt.noRecipes {
				b.fake.lib = nil
			}
			if tt.draining {
				b.srv.SetDraining()
				b.srv.SetDraining() // twice is once
			}
			w := b.do("GET", "/readyz", "", nil, "")
			got := []any{w.Code, strings.TrimSpace(w.Body.String()), b.logs.FilterMessageSnippet("Redis does not answer").Len() == 1}
			if diff := cmp.Diff([]any{tt.wantStatus, tt.wantBody, tt.wantWarned}, got); diff != "" {
				t.Errorf("status, body, warned (-want +got):\n%s", diff)
			}
			if n := b.logs.FilterMessage("draining: /readyz answers 503 from now on").Len(); tt.draining != (n == 1) {
				t.Errorf("%d lines say the node drains", n)
			}
			if w := b.do("GET", "/healthz", "", nil, ""); w.Code != 200 {
				t.Errorf("healthz: %d, want 200", w.Code)
			}
			if w := b.do("GET", "/v1/processes/p_alice", tokAlice, nil, ""); w.Code != 200 {
				t.Errorf("the API: %d, want 200", w.Code)
			}
		})
	}
}
