package api

import (
	"strings"
	"testing"
)

// TestMalformedQuery checks that a query string that does not decode is a
// 400 naming what is wrong, on every route: Go's URL.Query() would drop
// the pair and serve the request as if it were not there.
func TestMalformedQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, token string
		status                    int
		want                      string // in the error's message
	}{
		{"bad cursor escape", "", "/v1/processes?after=%%zz", tokOlga, 400, `parameter "after": the value "%%zz" does not decode (invalid URL escape "%%z")`},
		{"any parameter", "", "/v1/processes?cursor=%zz", tokOlga, 400, `parameter "cursor"`},
		{"a cut escape", "", "/v1/processes/p_alice/events?after=1-0&limit=%2", tokOlga, 400, `parameter "limit"`},
		{"bad name", "", "/v1/processes?%zz=1", tokOlga, 400, `the parameter name "%zz" does not decode`},
		{"semicolon", "", "/v1/processes?state=READY;limit=1", tokOlga, 400, `"state=READY;limit=1" holds a ';'`},
		{"events", "", "/v1/processes/p_alice/events?view=%zz", tokOlga, 400, `parameter "view"`},
		{"post", "POST", "/v1/processes/p_alice/pause?x=%", tokOlga, 400, `parameter "x"`},
		{"unknown route", "", "/v1/nowhere?x=%", tokOlga, 400, `parameter "x"`},
		{"probe", "", "/healthz?x=%zz", "", 400, `parameter "x"`},
		{"no token comes first", "", "/v1/processes?after=%zz", "", 401, "missing bearer token"},
		{"well formed", "", "/v1/processes?state=blocked&limit=2&after=&recipe=default", tokOlga, 200, `"processes":[`},
		{"escapes", "", "/v1/processes?state=%42LOCKED&x=a%20b+c%25", tokOlga, 200, `"processes":[`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			method := "GET"
			if tt.method != "" {
				method = tt.method
			}
			w := b.do(method, tt.path, tt.token, nil, "")
			if w.Code != tt.status {
				t.Fatalf("status %d %s, want %d", w.Code, w.Body, tt.status)
			}
			if tt.status == 400 && errorCode(w.Body.Bytes()) != CodeInvalidParameter {
				t.Errorf("error code %q, want %s", errorCode(w.Body.Bytes()), CodeInvalidParameter)
			}
			if tt.status == 200 {
				if !strings.Contains(w.Body.String(), tt.want) {
					t.Errorf("body lacks %q: %s", tt.want, w.Body)
				}
				return
			}
			wantMessage(tt.want)(t, w.Body.Bytes())
		})
	}
}
