package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// otherSpecs are the routes of the table that another specification
// describes, each with that specification: api/openapi.json leaves them
// out, and TestOpenAPIRoutes only checks that they are served. Every other
// route must be in the document.
var otherSpecs = map[string]string{
	"GET /v1/models":                                "OpenAI Models",
	"GET /v1/models/{model}":                        "OpenAI Models",
	"POST /v1/responses":                            "OpenAI Responses",
	"POST /v1/chat/completions":                     "OpenAI Chat Completions",
	"POST /a2a/{recipe}":                            "A2A 1.0 JSON-RPC binding",
	"POST /a2a/{recipe}/{$}":                        "A2A 1.0 JSON-RPC binding",
	"GET /a2a/{recipe}/.well-known/agent-card.json": "A2A 1.0 agent card",
	"GET /.well-known/agent-card.json":              "A2A 1.0 agent card (brain's list of them)",
}

// spec is api/openapi.json, parsed once for all the tests.
type spec struct {
	model *v3.Document
	// mu serialises the validator, whose thread safety is not documented.
	mu        sync.Mutex
	validator validator.Validator
	schemas   schema_validation.SchemaValidator
}

var loadSpec = sync.OnceValues(func() (*spec, error) {
	doc, err := libopenapi.NewDocument(openAPIDocument)
	if err != nil {
		return nil, err
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, fmt.Errorf("validator: %v", errs)
	}
	return &spec{model: &m.Model, validator: v, schemas: schema_validation.NewSchemaValidator()}, nil
})

func openAPISpec(t testing.TB) *spec {
	t.Helper()
	s, err := loadSpec()
	if err != nil {
		t.Fatalf("api/openapi.json: %v", err)
	}
	return s
}

// checkedResponses counts the answers of the API tests that were checked
// against the document.
var checkedResponses atomic.Int64

// checked serves srv, checking every answer against api/openapi.json: its
// status, content type and body (each frame of an event stream). A
// mismatch fails t. Every API test serves its server through it.
func checked(t testing.TB, srv *Server) http.Handler {
	sp := openAPISpec(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := r.Clone(r.Context())
		_, pattern := srv.mux.Handler(r)
		if _, other := otherSpecs[pattern]; other { // its own specification's clients test it
			srv.ServeHTTP(w, r)
			return
		}
		rec := &teeWriter{ResponseWriter: w}
		srv.ServeHTTP(rec, r)
		res := &http.Response{StatusCode: rec.status(), Header: w.Header().Clone(),
			Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())), Request: req}
		for _, problem := range sp.check(req, pattern != "", res) {
			t.Errorf("%s %s answered %d, not as api/openapi.json says: %s", r.Method, r.URL.Path, res.StatusCode, problem)
		}
		checkedResponses.Add(1)
	})
}

// teeWriter keeps a copy of what is written through it.
type teeWriter struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// check returns how res, the answer to req, departs from the document.
// routed says a route of the table served it; other requests get an
// error body (400 for a query that does not decode, 401, 404 or 405).
func (sp *spec) check(req *http.Request, routed bool, res *http.Response) []string {
	if !routed {
		if !slices.Contains([]int{400, 401, 404, 405}, res.StatusCode) {
			return []string{fmt.Sprintf("no route: status %d, want 400, 401, 404 or 405", res.StatusCode)}
		}
		return sp.checkJSON(fmt.Sprintf("Error%d", res.StatusCode), res)
	}
	var problems []string
	sp.mu.Lock()
	ok, errs := sp.validator.ValidateHttpResponse(req, res)
	sp.mu.Unlock()
	if !ok {
		for _, e := range errs {
			p := e.Message
			if e.Reason != "" {
				p += ": " + e.Reason
			}
			for _, f := range e.SchemaValidationErrors {
				p += fmt.Sprintf(" [%s: %s]", f.FieldPath, f.Reason)
			}
			problems = append(problems, p)
		}
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		problems = append(problems, sp.checkStream(res.Body)...)
	}
	return problems
}

// checkJSON checks the JSON body of res against the schema name of the
// components.
func (sp *spec) checkJSON(name string, res *http.Response) []string {
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		return []string{fmt.Sprintf("Content-Type %q, want application/json", ct)}
	}
	body, _ := io.ReadAll(res.Body)
	return sp.checkSchema(name, body)
}

func (sp *spec) checkSchema(name string, data []byte) []string {
	proxy := sp.model.Components.Schemas.GetOrZero(name)
	if proxy == nil {
		return []string{fmt.Sprintf("the document has no schema %s", name)}
	}
	sp.mu.Lock()
	ok, errs := sp.schemas.ValidateSchemaBytes(proxy.Schema(), data)
	sp.mu.Unlock()
	if ok {
		return nil
	}
	var problems []string
	for _, e := range errs {
		p := name + ": " + e.Message
		for _, f := range e.SchemaValidationErrors {
			p += fmt.Sprintf(" [%s: %s]", f.FieldPath, f.Reason)
		}
		problems = append(problems, p+": "+string(data))
	}
	return problems
}

// sseEvent is what the document says of an event kind of the stream
// (x-brain-sse-events): whether its frames have an id, and the schema of
// their data.
type sseEvent struct {
	ID   bool   `json:"id"`
	Data string `json:"data"`
}

// sseEvents reads x-brain-sse-events of the event stream's answer.
func (sp *spec) sseEvents() (map[string]sseEvent, error) {
	item := sp.model.Paths.PathItems.GetOrZero("/v1/processes/{id}/events/stream")
	if item == nil || item.Get == nil {
		return nil, fmt.Errorf("no GET /v1/processes/{id}/events/stream")
	}
	mt := item.Get.Responses.Codes.GetOrZero("200").Content.GetOrZero("text/event-stream")
	if mt == nil {
		return nil, fmt.Errorf("its 200 has no text/event-stream")
	}
	node := mt.Extensions.GetOrZero("x-brain-sse-events")
	if node == nil {
		return nil, fmt.Errorf("its text/event-stream has no x-brain-sse-events")
	}
	events := map[string]sseEvent{}
	if err := node.Decode(&events); err != nil {
		return nil, err
	}
	return events, nil
}

// checkStream checks each whole frame of an event stream: its event kind
// is one of x-brain-sse-events, with an id exactly when the kind has one,
// and its data matches the kind's schema (an event's type and id are the
// frame's).
func (sp *spec) checkStream(body io.Reader) []string {
	kinds, err := sp.sseEvents()
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	frame := map[string]string{}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(frame) > 0 {
				problems = append(problems, sp.checkFrame(kinds, frame)...)
			}
			frame = map[string]string{}
		case strings.HasPrefix(line, ":"): // a comment: the heartbeat
		default:
			field, value, _ := strings.Cut(line, ": ")
			if _, dup := frame[field]; dup {
				problems = append(problems, fmt.Sprintf("a frame with two %s lines", field))
			}
			frame[field] = value
		}
	} // a frame the stream's end cut is not checked
	return problems
}

func (sp *spec) checkFrame(kinds map[string]sseEvent, frame map[string]string) []string {
	name, hasID := frame["event"], frame["id"] != ""
	kind, ok := kinds[name]
	switch {
	case !ok:
		return []string{fmt.Sprintf("frame of event %q, which x-brain-sse-events does not name", name)}
	case kind.ID != hasID:
		return []string{fmt.Sprintf("frame of event %q with id %q; x-brain-sse-events says id: %v", name, frame["id"], kind.ID)}
	}
	data := []byte(frame["data"])
	problems := sp.checkSchema(strings.TrimPrefix(kind.Data, "#/components/schemas/"), data)
	if hasID {
		var ev struct{ ID, Type string }
		if json.Unmarshal(data, &ev) == nil && (ev.ID != frame["id"] || ev.Type != name) {
			problems = append(problems, fmt.Sprintf("frame id %q, event %q carries an event of id %q, type %q", frame["id"], name, ev.ID, ev.Type))
		}
	}
	return problems
}

// serveChecked starts a test server of srv whose answers are checked.
func serveChecked(t testing.TB, srv *Server) *httptest.Server {
	ts := httptest.NewServer(checked(t, srv))
	t.Cleanup(ts.Close)
	return ts
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	sp := openAPISpec(t)
	if sp.model.Version != "3.1.0" {
		t.Errorf("openapi: %q, want 3.1.0", sp.model.Version)
	}
	sp.mu.Lock()
	ok, errs := sp.validator.ValidateDocument()
	sp.mu.Unlock()
	if !ok {
		for _, e := range errs {
			t.Errorf("api/openapi.json: %s: %s", e.Message, e.Reason)
			for _, f := range e.SchemaValidationErrors {
				t.Errorf("  %s: %s", f.KeywordLocation, f.Reason)
			}
		}
	}
	kinds, err := sp.sseEvents()
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range kinds {
		if ref := strings.TrimPrefix(k.Data, "#/components/schemas/"); sp.model.Components.Schemas.GetOrZero(ref) == nil {
			t.Errorf("x-brain-sse-events: %s: data %q is no schema of the components", name, k.Data)
		}
	}
}

// TestOpenAPIRoutes holds the document to the route table both ways: every
// route is described (but those of otherSpecs, which must be served), with
// the role it needs, and every operation described is a route.
func TestOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	sp := openAPISpec(t)
	srv := setup(t).srv
	served := map[string]Role{}
	for _, e := range srv.table {
		served[e.pattern] = e.role
	}
	for pattern, other := range otherSpecs {
		if _, ok := served[pattern]; !ok {
			t.Errorf("%s (described by %s) is not served", pattern, other)
		}
	}
	described := map[string]bool{}
	for path, item := range sp.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			pattern := strings.ToUpper(method) + " " + path
			described[pattern] = true
			role, ok := served[pattern]
			if !ok {
				t.Errorf("%s is described but not served", pattern)
				continue
			}
			if other, ok := otherSpecs[pattern]; ok {
				t.Errorf("%s is described, but otherSpecs says %s describes it", pattern, other)
			}
			want := string(role)
			if role == "" {
				want = "public"
			}
			if got := extension(op.Extensions.GetOrZero("x-brain-role")); got != want {
				t.Errorf("%s: x-brain-role %q, want %q", pattern, got, want)
			}
			if public := op.Security != nil && len(op.Security) == 0; public != (role == "") {
				t.Errorf("%s: security: [] is %v, but the route needs role %q", pattern, public, role)
			}
		}
	}
	for _, e := range srv.table {
		if _, other := otherSpecs[e.pattern]; !other && !described[e.pattern] {
			t.Errorf("%s is served but not described in api/openapi.json", e.pattern)
		}
		if path := e.pattern[strings.IndexByte(e.pattern, ' ')+1:]; public(path) != (e.role == "") {
			t.Errorf("%s: public(%q) is %v, but its role is %q", e.pattern, path, public(path), e.role)
		}
	}
}

func extension(n interface{ Decode(any) error }) string {
	var s string
	if n == nil || n.Decode(&s) != nil {
		return ""
	}
	return s
}

// TestOpenAPIServed: GET /openapi.json answers the document without a
// token.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	w := setup(t).do("GET", "/openapi.json", "", nil, "")
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || !bytes.Equal(w.Body.Bytes(), openAPIDocument) {
		t.Errorf("GET /openapi.json: %d %q, %d bytes; want 200 application/json, the %d bytes of api/openapi.json",
			w.Code, w.Header().Get("Content-Type"), w.Body.Len(), len(openAPIDocument))
	}
}

// TestOpenAPIChecksAnswers: the API tests' answers go through checked,
// and checking finds an answer that departs from the document.
func TestOpenAPIChecksAnswers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	before := checkedResponses.Load()
	b.do("GET", "/v1/processes/p_alice", tokAlice, nil, "")
	b.do("GET", "/nowhere", tokAlice, nil, "")
	if n := checkedResponses.Load() - before; n < 2 {
		t.Errorf("%d answers of bundle.do checked, want 2", n)
	}

	sp := openAPISpec(t)
	tests := []struct {
		name, path, ctype, body string
		status                  int
		routed                  bool
		ok                      bool
	}{
		{"a process", "/v1/processes/p_1", "application/json",
			`{"id":"p_1","recipe":"r","engine":"chat","state":"READY","depth":0,"version":1,"queued":false,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`,
			200, true, true},
		{"a field renamed", "/v1/processes/p_1", "application/json",
			`{"id":"p_1","recipe_name":"r","engine":"chat","state":"READY","depth":0,"version":1,"queued":false,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`,
			200, true, false},
		{"a state that is none", "/v1/processes/p_1", "application/json",
			`{"id":"p_1","recipe":"r","engine":"chat","state":"ASLEEP","depth":0,"version":1,"queued":false,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`,
			200, true, false},
		{"an undescribed status", "/v1/processes/p_1", "application/json", `{"error":{"code":"busy","message":"m"}}`, 418, true, false},
		{"a code of another status", "/v1/processes/p_1", "application/json", `{"error":{"code":"busy","message":"m"}}`, 404, true, false},
		{"no route", "/nowhere", "application/json", `{"error":{"code":"not_found","message":"m"}}`, 404, false, true},
		{"no route, text", "/nowhere", "text/plain", `404 page not found`, 404, false, false},
		{"a stream", "/v1/processes/p_1/events/stream", "text/event-stream",
			": heartbeat\n\nid: 1-0\nevent: turn_start\ndata: {\"id\":\"1-0\",\"type\":\"turn_start\",\"at\":\"2026-01-01T00:00:00Z\",\"turn_start\":{}}\n\n" +
				"event: progress\ndata: {\"process\":\"p_1\",\"turn\":\"t\",\"round\":1,\"kind\":\"text\",\"at\":\"2026-01-01T00:00:00Z\",\"delta\":\"hi\"}\n\n",
			200, true, true},
		{"a stream's event off its schema", "/v1/processes/p_1/events/stream", "text/event-stream",
			"id: 1-0\nevent: turn_start\ndata: {\"id\":\"1-0\",\"type\":\"turn_start\",\"at\":\"2026-01-01T00:00:00Z\",\"turn_begin\":{}}\n\n", 200, true, false},
		{"a progress frame with an id", "/v1/processes/p_1/events/stream", "text/event-stream",
			"id: 1-0\nevent: progress\ndata: {\"process\":\"p_1\",\"turn\":\"t\",\"round\":1,\"kind\":\"text\",\"at\":\"2026-01-01T00:00:00Z\"}\n\n", 200, true, false},
		{"a stream as JSON", "/v1/processes/p_1/events/stream", "application/json", `{}`, 200, true, false},
		{"a zaphod recipe, a head with a timeout", "/v1/recipes/panel", "application/json",
			`{"name":"panel","engine":"zaphod","heads":[{"name":"a","timeout":"30s"},{"name":"b","model":{"name":"m"}}],"synthesis":{"system_prompt":"Compose."}}`,
			200, true, true},
		{"a head's field unknown", "/v1/recipes/panel", "application/json",
			`{"name":"panel","engine":"zaphod","heads":[{"name":"a","time_out":"30s"},{"name":"b"}],"synthesis":{}}`, 200, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest("GET", tt.path, nil)
			res := &http.Response{StatusCode: tt.status, Header: http.Header{"Content-Type": {tt.ctype}},
				Body: io.NopCloser(strings.NewReader(tt.body)), Request: req}
			problems := sp.check(req, tt.routed, res)
			if ok := len(problems) == 0; ok != tt.ok {
				t.Errorf("checked: ok %v, want %v; problems: %q", ok, tt.ok, problems)
			}
		})
	}
}
