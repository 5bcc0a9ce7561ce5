package provider

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestResponse(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxErrorBody+10)
	tests := []struct {
		name     string
		status   int
		body     string
		answered bool
		kept     string // the body Response keeps; "" when it keeps none
	}{
		{name: "2xx", status: 200, body: "data: {}\n\n", answered: true},
		{name: "error", status: 503, body: "<html>down</html>", kept: "<html>down</html>"},
		{name: "long error body", status: 400, body: long, kept: long[:MaxErrorBody]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			next := func(req *http.Request) (*http.Response, error) {
				rec := httptest.NewRecorder()
				rec.WriteHeader(tt.status)
				_, _ = rec.WriteString(tt.body)
				return rec.Result(), nil
			}
			var r Response
			res, err := r.Middleware(httptest.NewRequest(http.MethodPost, "/", nil), next)
			if err != nil {
				t.Fatal(err)
			}
			if r.Answered != tt.answered || string(r.Body) != tt.kept || (r.Failed != nil) != (tt.kept != "") {
				t.Errorf("answered %v, failed %v, body %d bytes; want %v, %v, %d bytes", r.Answered, r.Failed != nil, len(r.Body), tt.answered, tt.kept != "", len(tt.kept))
			}
			// The SDK still reads the body: whole for an answer, the kept
			// start for an error.
			b, _ := io.ReadAll(res.Body)
			want := tt.body
			if tt.kept != "" {
				want = tt.kept
			}
			if string(b) != want {
				t.Errorf("body left for the SDK: %d bytes, want %d", len(b), len(want))
			}
		})
	}
}
