package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// The bearer tokens of the tests, one per role (and two users).
const (
	tokAlice = "tok-alice-user"
	tokBob   = "tok-bob-user"
	tokOlga  = "tok-olga-operator"
	tokAdam  = "tok-adam-admin"
)

type bundle struct {
	fake *fake
	srv  *Server
	// h serves srv, checking its answers against api/openapi.json.
	h    http.Handler
	logs *observer.ObservedLogs
}

// setup returns a server on a fake holding, for alice: p_alice (BLOCKED),
// p_done, p_paused (from BLOCKED), p_failed; for bob: p_bob (BLOCKED).
func setup(t testing.TB, edit ...func(*Config)) *bundle {
	t.Helper()
	f := newFake()
	f.add("p_alice", "alice", lifecycle.Status{State: lifecycle.Blocked})
	f.add("p_bob", "bob", lifecycle.Status{State: lifecycle.Blocked})
	f.add("p_done", "alice", lifecycle.Status{State: lifecycle.Done})
	f.add("p_paused", "alice", lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Blocked})
	f.add("p_failed", "alice", lifecycle.Status{State: lifecycle.Failed})
	core, logs := observer.New(zap.DebugLevel)
	cfg := Config{
		Backend: f,
		Tokens: []Token{
			{Name: "alice", Role: RoleUser, SHA256: HashToken(tokAlice)},
			{Name: "bob", Role: RoleUser, SHA256: HashToken(tokBob)},
			{Name: "olga", Role: RoleOperator, SHA256: HashToken(tokOlga)},
			{Name: "adam", Role: RoleAdmin, SHA256: HashToken(tokAdam)},
		},
		Logger: zap.New(core),
	}
	for _, e := range edit {
		e(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{fake: f, srv: s, h: checked(t, s), logs: logs}
}

// do serves one request; token "" sends no Authorization header.
func (b *bundle) do(method, path, token string, header map[string]string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	b.h.ServeHTTP(w, req)
	return w
}

// errorCode returns the code of an error body, "" for any other body.
func errorCode(body []byte) string {
	var e Error
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Code
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	big := `{"content": "` + strings.Repeat("x", DefaultMaxBody) + `"}`
	tests := []struct {
		name         string
		method, path string
		token        string
		header       map[string]string
		body         string
		status       int
		code         string // error code; "" for a success
		check        func(t *testing.T, body []byte)
	}{
		// Authentication.
		{name: "no token", method: "GET", path: "/v1/processes", status: 401, code: CodeUnauthorized},
		{name: "bad token", method: "GET", path: "/v1/processes", token: "tok-mallory", status: 401, code: CodeUnauthorized},
		{name: "token prefix", method: "GET", path: "/v1/processes", token: tokAlice[:len(tokAlice)-1], status: 401, code: CodeUnauthorized},
		{name: "basic auth", method: "GET", path: "/v1/processes", header: map[string]string{"Authorization": "Basic YWxpY2U6eA=="}, status: 401, code: CodeUnauthorized},
		{name: "empty bearer", method: "GET", path: "/v1/processes", header: map[string]string{"Authorization": "Bearer "}, status: 401, code: CodeUnauthorized},
		{name: "unknown route needs a token", method: "GET", path: "/v1/secret", status: 401, code: CodeUnauthorized},
		{name: "unknown route", method: "GET", path: "/v1/nowhere", token: tokAlice, status: 404, code: CodeNotFound},
		{name: "root", method: "GET", path: "/", token: tokAlice, status: 404, code: CodeNotFound},
		{name: "wrong method", method: "PUT", path: "/v1/processes/p_alice", token: tokOlga, status: 405, code: CodeMethodNotAllowed},
		{name: "unknown action", method: "POST", path: "/v1/processes/p_alice/explode", token: tokOlga, status: 404, code: CodeNotFound},

		// Create.
		{name: "create waiting for the user", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"recipe": "default"}`, status: 201,
			check: wantProcess(func(p Process) bool { return p.State == "BLOCKED" && p.Owner == "alice" && p.Recipe == "default" })},
		{name: "create with input", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"recipe": "default", "input": "hi", "metadata": {"k": "v"}}`, status: 201,
			check: wantProcess(func(p Process) bool { return p.State == "READY" && p.Metadata["k"] == "v" })},
		{name: "create by an operator", method: "POST", path: "/v1/processes", token: tokOlga, body: `{"recipe": "default"}`, status: 201,
			check: wantProcess(func(p Process) bool { return p.Owner == "olga" })},
		{name: "create from an unknown recipe", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"recipe": "defualt"}`, status: 422, code: CodeUnknownRecipe,
			check: wantMessage(`did you mean`)},
		{name: "create without a recipe", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"input": "hi"}`, status: 422, code: CodeMissingRecipe},
		{name: "create with blank input", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"recipe": "default", "input": " \n\t"}`, status: 422, code: CodeEmptyContent},
		{name: "create with an unknown field", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"recipe": "default", "owner": "bob"}`, status: 400, code: CodeUnknownField,
			check: wantMessage(`"owner"`)},
		{name: "create with invalid JSON", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"recipe": `, status: 400, code: CodeInvalidJSON},
		{name: "create with bad syntax", method: "POST", path: "/v1/processes", token: tokAlice, body: `{recipe}`, status: 400, code: CodeInvalidJSON},
		{name: "create with a wrong type", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"recipe": 3}`, status: 400, code: CodeInvalidField},
		{name: "create with an array", method: "POST", path: "/v1/processes", token: tokAlice, body: `[]`, status: 400, code: CodeInvalidJSON},
		{name: "create with no body", method: "POST", path: "/v1/processes", token: tokAlice, status: 400, code: CodeInvalidJSON},
		{name: "create with trailing data", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"recipe": "default"} {}`, status: 400, code: CodeInvalidJSON},
		{name: "create too large", method: "POST", path: "/v1/processes", token: tokAlice, body: `{"recipe": "default", "input": "` + strings.Repeat("x", DefaultMaxBody) + `"}`, status: 413, code: CodeBodyTooLarge},

		// Get.
		{name: "get own", method: "GET", path: "/v1/processes/p_alice", token: tokAlice, status: 200,
			check: wantProcess(func(p Process) bool { return p.ID == "p_alice" && p.State == "BLOCKED" })},
		{name: "get another user's", method: "GET", path: "/v1/processes/p_bob", token: tokAlice, status: 404, code: CodeNotFound,
			check: wantMessage(`process "p_bob" not found`)},
		{name: "get missing", method: "GET", path: "/v1/processes/p_nope", token: tokAlice, status: 404, code: CodeNotFound,
			check: wantMessage(`process "p_nope" not found`)},
		{name: "operator gets any", method: "GET", path: "/v1/processes/p_bob", token: tokOlga, status: 200},
		{name: "paused from", method: "GET", path: "/v1/processes/p_paused", token: tokOlga, status: 200,
			check: wantProcess(func(p Process) bool { return p.State == "PAUSED" && p.PausedFrom == "BLOCKED" })},

		// List.
		{name: "list", method: "GET", path: "/v1/processes", token: tokOlga, status: 200},
		{name: "list bad state", method: "GET", path: "/v1/processes?state=ASLEEP", token: tokOlga, status: 400, code: CodeInvalidParameter},
		{name: "list bad limit", method: "GET", path: "/v1/processes?limit=-1", token: tokOlga, status: 400, code: CodeInvalidParameter},
		{name: "list bad limit word", method: "GET", path: "/v1/processes?limit=ten", token: tokOlga, status: 400, code: CodeInvalidParameter},
		{name: "list bad cursor", method: "GET", path: "/v1/processes?after=garbage", token: tokOlga, status: 400, code: CodeInvalidParameter},

		// Messages.
		{name: "message own", method: "POST", path: "/v1/processes/p_alice/messages", token: tokAlice, body: `{"content": "hello"}`, status: 202,
			check: func(t *testing.T, body []byte) {
				var m MessageAccepted
				if err := json.Unmarshal(body, &m); err != nil || m.MessageID == "" {
					t.Errorf("body %s: want a message_id", body)
				}
			}},
		{name: "message another user's", method: "POST", path: "/v1/processes/p_bob/messages", token: tokAlice, body: `{"content": "hello"}`, status: 404, code: CodeNotFound},
		{name: "message missing", method: "POST", path: "/v1/processes/p_nope/messages", token: tokOlga, body: `{"content": "hello"}`, status: 404, code: CodeNotFound},
		{name: "message a done process", method: "POST", path: "/v1/processes/p_done/messages", token: tokAlice, body: `{"content": "hello"}`, status: 409, code: CodeProcessClosed},
		{name: "message empty", method: "POST", path: "/v1/processes/p_alice/messages", token: tokAlice, body: `{"content": ""}`, status: 422, code: CodeEmptyContent},
		{name: "message blank", method: "POST", path: "/v1/processes/p_alice/messages", token: tokAlice, body: `{"content": " \n "}`, status: 422, code: CodeEmptyContent},
		{name: "message unknown field", method: "POST", path: "/v1/processes/p_alice/messages", token: tokAlice, body: `{"content": "hi", "from": "olga"}`, status: 400, code: CodeUnknownField},
		{name: "message too large", method: "POST", path: "/v1/processes/p_alice/messages", token: tokAlice, body: big, status: 413, code: CodeBodyTooLarge},
		{name: "message bad idempotency key", method: "POST", path: "/v1/processes/p_alice/messages", token: tokAlice, header: map[string]string{"Idempotency-Key": strings.Repeat("k", 300)},
			body: `{"content": "hi"}`, status: 400, code: CodeInvalidHeader},

		// Steer.
		{name: "user steers", method: "POST", path: "/v1/processes/p_alice/steer", token: tokAlice, body: `{"content": "hi"}`, status: 403, code: CodeForbidden},
		{name: "operator steers", method: "POST", path: "/v1/processes/p_bob/steer", token: tokOlga, body: `{"content": "be brief"}`, status: 202},
		{name: "admin steers", method: "POST", path: "/v1/processes/p_bob/steer", token: tokAdam, body: `{"content": "be brief"}`, status: 202},
		{name: "steer a done process", method: "POST", path: "/v1/processes/p_done/steer", token: tokOlga, body: `{"content": "hi"}`, status: 409, code: CodeProcessClosed},
		{name: "steer blank", method: "POST", path: "/v1/processes/p_bob/steer", token: tokOlga, body: `{"content": "\t"}`, status: 422, code: CodeEmptyContent},
		{name: "steer missing", method: "POST", path: "/v1/processes/p_nope/steer", token: tokOlga, body: `{"content": "hi"}`, status: 404, code: CodeNotFound},
		{name: "steer too large", method: "POST", path: "/v1/processes/p_bob/steer", token: tokOlga, body: big, status: 413, code: CodeBodyTooLarge},

		// Inbox.
		{name: "user reads the inbox", method: "GET", path: "/v1/processes/p_alice/inbox", token: tokAlice, status: 403, code: CodeForbidden},
		{name: "operator reads the inbox", method: "GET", path: "/v1/processes/p_bob/inbox", token: tokOlga, status: 200,
			check: func(t *testing.T, body []byte) {
				var l InboxList
				if err := json.Unmarshal(body, &l); err != nil || l.Messages == nil || len(l.Messages) != 0 {
					t.Errorf("body %s: want an empty list of messages", body)
				}
			}},
		{name: "inbox of a missing process", method: "GET", path: "/v1/processes/p_nope/inbox", token: tokOlga, status: 404, code: CodeNotFound},

		// Timers.
		{name: "user lists her timers", method: "GET", path: "/v1/processes/p_alice/timers", token: tokAlice, status: 200,
			check: func(t *testing.T, body []byte) {
				var l TimerList
				if err := json.Unmarshal(body, &l); err != nil || l.Timers == nil || len(l.Timers) != 0 {
					t.Errorf("body %s: want an empty list of timers", body)
				}
			}},
		{name: "timers of another user's", method: "GET", path: "/v1/processes/p_bob/timers", token: tokAlice, status: 404, code: CodeNotFound},
		{name: "user schedules", method: "POST", path: "/v1/processes/p_alice/timers", token: tokAlice, body: `{"in": "10m", "message": "check"}`, status: 403, code: CodeForbidden},
		{name: "operator schedules", method: "POST", path: "/v1/processes/p_bob/timers", token: tokOlga, body: `{"in": "10m", "message": "check the build"}`, status: 201,
			check: func(t *testing.T, body []byte) {
				var tm Timer
				if err := json.Unmarshal(body, &tm); err != nil || tm.ID == "" || tm.Message != "check the build" ||
					!tm.Due.Equal(fakeNow.Add(10*time.Minute)) || tm.At == nil || !tm.At.Equal(tm.Due) || tm.Cron != "" {
					t.Errorf("body %s: want the timer, due in 10 minutes, once", body)
				}
			}},
		{name: "schedule without when", method: "POST", path: "/v1/processes/p_bob/timers", token: tokOlga, body: `{"message": "check"}`, status: 422, code: CodeInvalidTimer,
			check: wantMessage(`the timer needs exactly one of "in", "at" and "cron" (got none)`)},
		{name: "schedule in and cron", method: "POST", path: "/v1/processes/p_bob/timers", token: tokOlga, body: `{"in": "1m", "cron": "@hourly", "message": "check"}`, status: 422, code: CodeInvalidTimer,
			check: wantMessage(`(got "in" and "cron")`)},
		{name: "schedule a blank message", method: "POST", path: "/v1/processes/p_bob/timers", token: tokOlga, body: `{"in": "1m", "message": " "}`, status: 422, code: CodeInvalidTimer,
			check: wantMessage(`the timer "message" is blank`)},
		{name: "schedule a bad cron", method: "POST", path: "/v1/processes/p_bob/timers", token: tokOlga, body: `{"cron": "bad", "message": "check"}`, status: 422, code: CodeInvalidTimer,
			check: wantMessage(`invalid cron expression "bad"`)},
		{name: "schedule with an unknown field", method: "POST", path: "/v1/processes/p_bob/timers", token: tokOlga, body: `{"every": "1h", "message": "check"}`, status: 400, code: CodeUnknownField},
		{name: "schedule on a done process", method: "POST", path: "/v1/processes/p_done/timers", token: tokOlga, body: `{"in": "1m", "message": "check"}`, status: 409, code: CodeProcessClosed},
		{name: "schedule on a missing process", method: "POST", path: "/v1/processes/p_nope/timers", token: tokOlga, body: `{"in": "1m", "message": "check"}`, status: 404, code: CodeNotFound,
			check: wantMessage(`process "p_nope" not found`)},
		{name: "user cancels", method: "DELETE", path: "/v1/processes/p_alice/timers/w_1", token: tokAlice, status: 403, code: CodeForbidden},
		{name: "cancel a missing timer", method: "DELETE", path: "/v1/processes/p_bob/timers/w_nope", token: tokOlga, status: 404, code: CodeNotFound,
			check: wantMessage(`process "p_bob" has no timer "w_nope"`)},
		{name: "cancel on a missing process", method: "DELETE", path: "/v1/processes/p_nope/timers/w_1", token: tokOlga, status: 404, code: CodeNotFound,
			check: wantMessage(`process "p_nope" not found`)},

		// Delete.
		{name: "user deletes hers", method: "DELETE", path: "/v1/processes/p_alice", token: tokAlice, status: 200,
			check: wantProcess(func(p Process) bool { return p.ID == "p_alice" && p.State == "BLOCKED" })},
		{name: "delete another user's", method: "DELETE", path: "/v1/processes/p_bob", token: tokAlice, status: 404, code: CodeNotFound},
		{name: "operator deletes any", method: "DELETE", path: "/v1/processes/p_bob", token: tokOlga, status: 200,
			check: wantProcess(func(p Process) bool { return p.Owner == "bob" })},
		{name: "delete missing", method: "DELETE", path: "/v1/processes/p_nope", token: tokOlga, status: 404, code: CodeNotFound},

		// Controls.
		{name: "user pauses", method: "POST", path: "/v1/processes/p_alice/pause", token: tokAlice, status: 403, code: CodeForbidden},
		{name: "user stops", method: "POST", path: "/v1/processes/p_alice/stop", token: tokAlice, status: 403, code: CodeForbidden},
		{name: "user resumes", method: "POST", path: "/v1/processes/p_paused/resume", token: tokAlice, status: 403, code: CodeForbidden},
		{name: "user retries", method: "POST", path: "/v1/processes/p_failed/retry", token: tokAlice, status: 403, code: CodeForbidden},
		{name: "pause", method: "POST", path: "/v1/processes/p_alice/pause", token: tokOlga, status: 200,
			check: wantProcess(func(p Process) bool { return p.State == "PAUSED" && p.PausedFrom == "BLOCKED" })},
		{name: "pause paused", method: "POST", path: "/v1/processes/p_paused/pause", token: tokOlga, status: 409, code: CodeInvalidState},
		{name: "resume", method: "POST", path: "/v1/processes/p_paused/resume", token: tokOlga, status: 200,
			check: wantProcess(func(p Process) bool { return p.State == "BLOCKED" })},
		{name: "resume not paused", method: "POST", path: "/v1/processes/p_alice/resume", token: tokOlga, status: 409, code: CodeInvalidState,
			check: wantMessage("resume is not allowed while the process is BLOCKED")},
		{name: "stop", method: "POST", path: "/v1/processes/p_alice/stop", token: tokOlga, status: 200,
			check: wantProcess(func(p Process) bool { return p.State == "DONE" })},
		{name: "stop done", method: "POST", path: "/v1/processes/p_done/stop", token: tokOlga, status: 409, code: CodeInvalidState,
			check: wantMessage("stop is not allowed while the process is DONE")},
		{name: "retry", method: "POST", path: "/v1/processes/p_failed/retry", token: tokOlga, status: 200,
			check: wantProcess(func(p Process) bool { return p.State == "READY" })},
		{name: "retry not failed", method: "POST", path: "/v1/processes/p_alice/retry", token: tokAdam, status: 409, code: CodeInvalidState},
		{name: "pause missing", method: "POST", path: "/v1/processes/p_nope/pause", token: tokOlga, status: 404, code: CodeNotFound},

		// Events.
		{name: "events own", method: "GET", path: "/v1/processes/p_alice/events", token: tokAlice, status: 200},
		{name: "events own user view", method: "GET", path: "/v1/processes/p_alice/events?view=user", token: tokAlice, status: 200},
		{name: "events raw as user", method: "GET", path: "/v1/processes/p_alice/events?view=raw", token: tokAlice, status: 403, code: CodeForbidden},
		{name: "events raw as operator", method: "GET", path: "/v1/processes/p_alice/events?view=raw", token: tokOlga, status: 200},
		{name: "events bad view", method: "GET", path: "/v1/processes/p_alice/events?view=all", token: tokOlga, status: 400, code: CodeInvalidParameter},
		{name: "events bad after", method: "GET", path: "/v1/processes/p_alice/events?after=latest", token: tokOlga, status: 400, code: CodeInvalidParameter},
		{name: "events bad limit", method: "GET", path: "/v1/processes/p_alice/events?limit=1.5", token: tokOlga, status: 400, code: CodeInvalidParameter},
		{name: "events another user's", method: "GET", path: "/v1/processes/p_bob/events", token: tokAlice, status: 404, code: CodeNotFound},
		{name: "events missing", method: "GET", path: "/v1/processes/p_nope/events", token: tokOlga, status: 404, code: CodeNotFound},
		{name: "stream raw as user", method: "GET", path: "/v1/processes/p_alice/events/stream?view=raw", token: tokAlice, status: 403, code: CodeForbidden},
		{name: "stream another user's", method: "GET", path: "/v1/processes/p_bob/events/stream", token: tokAlice, status: 404, code: CodeNotFound},
		{name: "stream missing", method: "GET", path: "/v1/processes/p_nope/events/stream", token: tokOlga, status: 404, code: CodeNotFound},
		{name: "stream bad Last-Event-ID", method: "GET", path: "/v1/processes/p_alice/events/stream", token: tokOlga,
			header: map[string]string{"Last-Event-ID": "latest"}, status: 400, code: CodeInvalidParameter},
		{name: "stream without a token", method: "GET", path: "/v1/processes/p_alice/events/stream", status: 401, code: CodeUnauthorized},
		{name: "stream bad progress", method: "GET", path: "/v1/processes/p_alice/events/stream?progress=yes", token: tokOlga, status: 400,
			code: CodeInvalidParameter, check: wantMessage(`progress: want 0 (durable events only) or 1 (the default: the progress of running turns too) (got "yes")`)},

		// Recipes.
		{name: "recipes", method: "GET", path: "/v1/recipes", token: tokAlice, status: 200,
			check: func(t *testing.T, body []byte) {
				var l RecipeList
				if err := json.Unmarshal(body, &l); err != nil || len(l.Recipes) == 0 {
					t.Errorf("body %s: want recipes", body)
				}
			}},
		{name: "recipe", method: "GET", path: "/v1/recipes/ford", token: tokAlice, status: 200,
			check: func(t *testing.T, body []byte) {
				var r recipes.Recipe
				if err := json.Unmarshal(body, &r); err != nil || r.Name != "ford" || !r.HasTool("respond") {
					t.Errorf("body %s: want ford resolved with default's tools (err %v)", body, err)
				}
			}},
		{name: "recipe missing", method: "GET", path: "/v1/recipes/nope", token: tokAlice, status: 404, code: CodeNotFound},
		{name: "recipes without a token", method: "GET", path: "/v1/recipes", status: 401, code: CodeUnauthorized},
		{name: "reload as user", method: "POST", path: "/v1/recipes/reload", token: tokAlice, status: 403, code: CodeForbidden},
		{name: "reload as operator", method: "POST", path: "/v1/recipes/reload", token: tokOlga, status: 403, code: CodeForbidden},
		{name: "reload without Reload", method: "POST", path: "/v1/recipes/reload", token: tokAdam, status: 501, code: CodeNotImplemented},

		// Probes.
		{name: "healthz", method: "GET", path: "/healthz", status: 200},
		{name: "readyz", method: "GET", path: "/readyz", status: 200},
		{name: "metrics not configured", method: "GET", path: "/metrics", status: 404, code: CodeNotFound},
		{name: "healthz with a bad token", method: "GET", path: "/healthz", token: "nonsense", status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			w := b.do(tt.method, tt.path, tt.token, tt.header, tt.body)
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d; body %s", w.Code, tt.status, w.Body)
			}
			if got := errorCode(w.Body.Bytes()); got != tt.code {
				t.Errorf("error code = %q, want %q; body %s", got, tt.code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			if tt.status == 401 && w.Header().Get("WWW-Authenticate") != `Bearer realm="brain"` {
				t.Errorf("WWW-Authenticate = %q, want Bearer", w.Header().Get("WWW-Authenticate"))
			}
			if tt.check != nil {
				tt.check(t, w.Body.Bytes())
			}
		})
	}
}

func wantProcess(ok func(Process) bool) func(*testing.T, []byte) {
	return func(t *testing.T, body []byte) {
		t.Helper()
		var p Process
		if err := json.Unmarshal(body, &p); err != nil || !ok(p) {
			t.Errorf("process %s does not match (err %v)", body, err)
		}
	}
}

func wantMessage(part string) func(*testing.T, []byte) {
	return func(t *testing.T, body []byte) {
		t.Helper()
		var e Error
		if err := json.Unmarshal(body, &e); err != nil || !strings.Contains(e.Message, part) {
			t.Errorf("error %s: want a message containing %q", body, part)
		}
	}
}

// Messages and controls carry who sent them.
func TestSendersAndActors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if w := b.do("POST", "/v1/processes/p_alice/messages", tokAlice, nil, `{"content": "hi"}`); w.Code != 202 {
		t.Fatalf("message: %d %s", w.Code, w.Body)
	}
	if w := b.do("POST", "/v1/processes/p_alice/steer", tokOlga, nil, `{"content": "be brief"}`); w.Code != 202 {
		t.Fatalf("steer: %d %s", w.Code, w.Body)
	}
	if w := b.do("POST", "/v1/processes/p_alice/stop", tokOlga, nil, ""); w.Code != 200 {
		t.Fatalf("stop: %d %s", w.Code, w.Body)
	}
	var by []string
	for _, e := range b.fake.logs["p_alice"] {
		by = append(by, string(e.Type)+" "+e.By)
	}
	want := []string{"inbox_message user:alice", "inbox_message operator:olga", "state_change operator:olga"}
	if strings.Join(by, "|") != strings.Join(want, "|") {
		t.Errorf("log = %q, want %q", by, want)
	}
	if e := b.fake.logs["p_alice"][2]; e.StateChange.Event != string(lifecycle.Finish) {
		t.Errorf("stop fired %q, want finish", e.StateChange.Event)
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := map[string]string{"Idempotency-Key": "k-1"}
	ids := make([]string, 3)
	for i, h := range []map[string]string{key, key, nil} {
		w := b.do("POST", "/v1/processes/p_alice/messages", tokAlice, h, `{"content": "hi"}`)
		var m MessageAccepted
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || w.Code != 202 {
			t.Fatalf("post %d: %d %s", i, w.Code, w.Body)
		}
		ids[i] = m.MessageID
	}
	if ids[0] != ids[1] || ids[0] == ids[2] {
		t.Errorf("message ids %q: want the first two equal (same key), the third new", ids)
	}
	if n := len(b.fake.logs["p_alice"]); n != 2 {
		t.Errorf("%d messages logged, want 2", n)
	}
	// An operator's message takes a key too.
	var steered []string
	for i, h := range []map[string]string{{"Idempotency-Key": "s-1"}, {"Idempotency-Key": "s-1"}} {
		w := b.do("POST", "/v1/processes/p_alice/steer", tokOlga, h, `{"content": "be brief"}`)
		var m MessageAccepted
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || w.Code != 202 {
			t.Fatalf("steer %d: %d %s", i, w.Code, w.Body)
		}
		steered = append(steered, m.MessageID)
	}
	if steered[0] != steered[1] || len(b.fake.logs["p_alice"]) != 3 {
		t.Errorf("steered ids %q, %d messages logged; want one message, stored once", steered, len(b.fake.logs["p_alice"]))
	}
	// A create takes one: repeated, it answers with the process the first
	// made; for another recipe, 409.
	var created []string
	for i := range 2 {
		w := b.do("POST", "/v1/processes", tokAlice, map[string]string{"Idempotency-Key": "c-1"}, `{"recipe": "default"}`)
		var p Process
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != 201 {
			t.Fatalf("create %d: %d %s", i, w.Code, w.Body)
		}
		created = append(created, p.ID)
	}
	if created[0] != created[1] {
		t.Errorf("created %q, want one process", created)
	}
	w := b.do("POST", "/v1/processes", tokAlice, map[string]string{"Idempotency-Key": "c-1"}, `{"recipe": "ford"}`)
	if w.Code != 409 || errorCode(w.Body.Bytes()) != CodeKeyReused {
		t.Errorf("the key again for another recipe: %d %s, want 409 %s", w.Code, w.Body, CodeKeyReused)
	}
}

// A user lists only their own processes, page after page, without losing
// any; an operator lists all.
func TestListOwnership(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for range 3 {
		b.fake.add("p_b"+string(rune('0'+len(b.fake.order))), "bob", lifecycle.Status{State: lifecycle.Blocked})
	}
	b.fake.add("p_alice2", "alice", lifecycle.Status{State: lifecycle.Blocked})
	list := func(token, query string) (ids []string, pages int) {
		after := ""
		for {
			w := b.do("GET", "/v1/processes?limit=2"+query+"&after="+after, token, nil, "")
			var p ProcessPage
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != 200 {
				t.Fatalf("list: %d %s", w.Code, w.Body)
			}
			pages++
			for _, pr := range p.Processes {
				ids = append(ids, pr.ID)
			}
			if p.Next == "" {
				return ids, pages
			}
			after = p.Next
		}
	}
	ids, _ := list(tokAlice, "")
	if got, want := strings.Join(ids, ","), "p_alice,p_done,p_paused,p_failed,p_alice2"; got != want {
		t.Errorf("alice lists %s, want %s", got, want)
	}
	b.fake.mu.Lock()
	owned := b.fake.ownedLists
	b.fake.mu.Unlock()
	if owned == 0 {
		t.Error("a user's list did not come from the owner index")
	}
	ids, _ = list(tokOlga, "")
	if len(ids) != 9 {
		t.Errorf("olga lists %d processes (%s), want 9", len(ids), ids)
	}
	b.fake.mu.Lock()
	if b.fake.ownedLists != owned {
		t.Error("an operator's list came from an owner index")
	}
	b.fake.mu.Unlock()
	ids, _ = list(tokAlice, "&state=blocked")
	if got, want := strings.Join(ids, ","), "p_alice,p_alice2"; got != want {
		t.Errorf("alice lists BLOCKED %s, want %s", got, want)
	}
}

// The user view of a page is conversation.UserView of the log; next moves
// over the events it leaves out.
func TestEventPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	logged := b.fake.appendEvents("p_alice",
		conversation.NewTurnStart("wake"),
		conversation.NewStateChange("READY", "RUNNING", "wake"),
		conversation.NewInboxMessage("m1", conversation.KindUser, "user:alice", "hi"),
		conversation.NewInboxMessage("m2", conversation.KindOperator, "operator:olga", "be brief"),
		conversation.NewChatMessage("Hello."),
		conversation.NewStateChange("RUNNING", "BLOCKED", "await_user"),
	)
	page := func(token, query string) EventPage {
		t.Helper()
		w := b.do("GET", "/v1/processes/p_alice/events?"+query, token, nil, "")
		var p EventPage
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != 200 {
			t.Fatalf("events?%s: %d %s", query, w.Code, w.Body)
		}
		return p
	}
	ids := func(evs []conversation.Event) string {
		var s []string
		for _, e := range evs {
			s = append(s, e.ID)
		}
		return strings.Join(s, ",")
	}
	last := logged[len(logged)-1].ID

	raw := page(tokOlga, "view=raw")
	if ids(raw.Events) != ids(logged) || raw.Next != last {
		t.Errorf("raw page = %s next %s, want %s next %s", ids(raw.Events), raw.Next, ids(logged), last)
	}
	user := page(tokAlice, "")
	if want := ids(conversation.UserView(logged)); ids(user.Events) != want || user.Next != last {
		t.Errorf("user page = %s next %s, want %s next %s", ids(user.Events), user.Next, want, last)
	}
	// Limit 2 in the user view: the turn start and alice's message, read
	// over the state change between them; next is the message's id.
	small := page(tokAlice, "limit=2")
	if want := logged[0].ID + "," + logged[2].ID; ids(small.Events) != want || small.Next != logged[2].ID {
		t.Errorf("user page of 2 = %s next %s, want %s next %s", ids(small.Events), small.Next, want, logged[2].ID)
	}
	rest := page(tokAlice, "after="+small.Next)
	if want := logged[4].ID; ids(rest.Events) != want || rest.Next != last {
		t.Errorf("next user page = %s next %s, want %s next %s", ids(rest.Events), rest.Next, want, last)
	}
	end := page(tokOlga, "view=raw&after="+last)
	if len(end.Events) != 0 || end.Next != last {
		t.Errorf("page after the end = %s next %q, want none next %s", ids(end.Events), end.Next, last)
	}
}

// With no tokens the server is open: every request is an admin's with no
// name.
func TestOpenMode(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.Tokens = nil })
	w := b.do("POST", "/v1/processes", "", nil, `{"recipe": "default"}`)
	var p Process
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != 201 || p.Owner != "" {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	for _, path := range []string{"/v1/processes/" + p.ID + "/messages", "/v1/processes/" + p.ID + "/steer"} {
		if w := b.do("POST", path, "", nil, `{"content": "hi"}`); w.Code != 202 {
			t.Errorf("%s: %d %s", path, w.Code, w.Body)
		}
	}
	if w := b.do("POST", "/v1/processes/"+p.ID+"/pause", "", nil, ""); w.Code != 200 {
		t.Errorf("pause: %d %s", w.Code, w.Body)
	}
	if w := b.do("GET", "/v1/processes/p_bob/events?view=raw", "", nil, ""); w.Code != 200 {
		t.Errorf("raw view: %d %s", w.Code, w.Body)
	}
	var by []string
	for _, e := range b.fake.logs[p.ID] {
		by = append(by, e.By)
	}
	if got := strings.Join(by, ","); got != "user,operator,operator" {
		t.Errorf("senders = %s, want user,operator,operator", got)
	}
}

func TestReload(t *testing.T) {
	t.Parallel()
	var calls int
	b := setup(t, func(c *Config) {
		c.Reload = func(context.Context) error {
			calls++
			if calls == 2 {
				return recipes.Errors{{File: "recipes/x.yaml", Line: 3, Col: 1, Path: "model", Message: "required"}}
			}
			return nil
		}
	})
	if w := b.do("POST", "/v1/recipes/reload", tokAdam, nil, ""); w.Code != 200 {
		t.Fatalf("reload: %d %s", w.Code, w.Body)
	}
	w := b.do("POST", "/v1/recipes/reload", tokAdam, nil, "")
	if w.Code != 422 || errorCode(w.Body.Bytes()) != CodeInvalidRecipes || !strings.Contains(w.Body.String(), "recipes/x.yaml:3:1") {
		t.Fatalf("failed reload: %d %s, want 422 naming the problem", w.Code, w.Body)
	}
	if calls != 2 {
		t.Errorf("Reload called %d times, want 2", calls)
	}
}

func TestProbes(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("brain_up 1\n")) })
	b := setup(t, func(c *Config) { c.Metrics = metrics })
	if w := b.do("GET", "/metrics", "", nil, ""); w.Code != 200 || w.Body.String() != "brain_up 1\n" {
		t.Errorf("metrics: %d %s", w.Code, w.Body)
	}
	b.fake.pingErr = errors.New("dial tcp 10.0.0.7:6379: connection refused")
	if w := b.do("GET", "/healthz", "", nil, ""); w.Code != 200 {
		t.Errorf("healthz without Redis: %d, want 200", w.Code)
	}
}

// An unexpected error is a generic 500; its details reach only the log,
// and no token or Authorization header ever does.
func TestInternalErrorsAndSecrets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.setFail(errors.New("redis: connection pool exhausted"))
	for _, path := range []string{"/v1/processes/p_alice", "/v1/processes", "/v1/processes/p_alice/events?view=raw"} {
		w := b.do("GET", path, tokOlga, nil, "")
		if w.Code != 500 || errorCode(w.Body.Bytes()) != CodeInternal || strings.Contains(w.Body.String(), "pool") {
			t.Errorf("GET %s: %d %s, want a generic 500", path, w.Code, w.Body)
		}
	}
	b.do("GET", "/v1/processes", "tok-wrong-secret", nil, "")
	b.do("POST", "/v1/processes", tokAlice, nil, `{"recipe": "default"}`)
	entries := b.logs.All()
	if len(entries) == 0 {
		t.Fatal("nothing logged")
	}
	var logged strings.Builder
	for _, e := range entries {
		logged.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			logged.WriteString(" " + k + "=")
			s, _ := json.Marshal(v)
			logged.Write(s)
		}
		logged.WriteString("\n")
	}
	out := logged.String()
	if !strings.Contains(out, "connection pool exhausted") {
		t.Errorf("the log lacks the error's details:\n%s", out)
	}
	for _, secret := range []string{tokOlga, tokAlice, "tok-wrong-secret", "Bearer", "Authorization"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q:\n%s", secret, out)
		}
	}
}

// A request that Redis could not serve just now is a 503 with Retry-After,
// the details logged, not sent.
func TestUnavailableIsA503(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.setFail(fmt.Errorf("store: post: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}))
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/v1/processes", ""},
		{"POST", "/v1/processes/p_alice/messages", `{"content": "hello"}`},
	} {
		w := b.do(req.method, req.path, tokOlga, nil, req.body)
		if w.Code != 503 || errorCode(w.Body.Bytes()) != CodeUnavailable || w.Header().Get("Retry-After") != "1" ||
			strings.Contains(w.Body.String(), "refused") {
			t.Errorf("%s %s: %d %s (Retry-After %q), want 503 unavailable, Retry-After 1, no details",
				req.method, req.path, w.Code, w.Body, w.Header().Get("Retry-After"))
		}
	}
	if n := b.logs.FilterMessage("request failed: Redis cannot serve just now").Len(); n != 2 {
		t.Errorf("%d failures logged, want 2", n)
	}
}

// A panic in a handler is a 500 with the stack logged, not a dead server.
func TestPanicIsA500(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) {
		c.Metrics = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	})
	w := b.do("GET", "/metrics", "", nil, "")
	if w.Code != 500 || errorCode(w.Body.Bytes()) != CodeInternal {
		t.Errorf("panic: %d %s, want 500 internal", w.Code, w.Body)
	}
	if b.logs.FilterMessage("panic in a handler").Len() != 1 {
		t.Error("the panic is not logged")
	}
}

// The process and list answers carry the inbox depth; others leave it out.
func TestInboxDepthReported(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.mu.Lock()
	b.fake.procs["p_alice"].Inbox = 3
	b.fake.mu.Unlock()
	for _, path := range []string{"/v1/processes/p_alice", "/v1/processes?state=blocked"} {
		w := b.do("GET", path, tokAlice, nil, "")
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"inbox":3`) {
			t.Errorf("GET %s: %d %s; want inbox 3", path, w.Code, w.Body)
		}
	}
	w := b.do("POST", "/v1/processes", tokAlice, nil, `{"recipe": "default"}`)
	if w.Code != 201 || strings.Contains(w.Body.String(), `"inbox"`) {
		t.Errorf("create: %d %s; want no inbox figure (not read)", w.Code, w.Body)
	}
}

// A full inbox answers 429: the fake's holds the store's default limit.
func TestInboxFullAnswers429(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range store.DefaultInboxLimit {
		if _, err := b.fake.Send(context.Background(), "p_alice", "user:alice", fmt.Sprint(i), ""); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	w := b.do("POST", "/v1/processes/p_alice/messages", tokAlice, nil, `{"content": "one more"}`)
	if w.Code != http.StatusTooManyRequests || errorCode(w.Body.Bytes()) != CodeInboxFull ||
		!strings.Contains(w.Body.String(), fmt.Sprintf("%d messages waiting", store.DefaultInboxLimit)) {
		t.Errorf("message to a full inbox: %d %s; want 429 %s", w.Code, w.Body, CodeInboxFull)
	}
	w = b.do("GET", "/v1/processes/p_alice", tokAlice, nil, "")
	if want := fmt.Sprintf(`"inbox":%d`, store.DefaultInboxLimit); !strings.Contains(w.Body.String(), want) || !strings.Contains(w.Body.String(), `"state":"READY"`) {
		t.Errorf("GET: %s; want the process READY (the first message unblocked it), %s", w.Body, want)
	}
}

// A user's message to a process that runs a turn and whose recipe refuses
// messages meanwhile answers 409 busy, saying which process, why and what
// to do; nothing is stored, and an operator's message is taken.
func TestBusyAnswers409(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.addSteered("p_busy", "alice", lifecycle.Status{State: lifecycle.Running}, inbox.SteeringReject)
	w := b.do("POST", "/v1/processes/p_busy/messages", tokAlice, map[string]string{"Idempotency-Key": "k1"}, `{"content": "and?"}`)
	if w.Code != http.StatusConflict || errorCode(w.Body.Bytes()) != CodeBusy {
		t.Fatalf("message to a busy process: %d %s; want 409 %s", w.Code, w.Body, CodeBusy)
	}
	for _, says := range []string{"p_busy is running a turn", "steering.user_messages: reject", "send it again when the turn has ended"} {
		if !strings.Contains(w.Body.String(), says) {
			t.Errorf("message to a busy process: %s; want it to say %q", w.Body, says)
		}
	}
	if w := b.do("POST", "/v1/processes/p_busy/steer", tokOlga, nil, `{"content": "hurry"}`); w.Code != http.StatusAccepted {
		t.Errorf("steering a busy process: %d %s; want 202", w.Code, w.Body)
	}
	w = b.do("GET", "/v1/processes/p_busy", tokAlice, nil, "")
	if !strings.Contains(w.Body.String(), `"inbox":1`) || !strings.Contains(w.Body.String(), `"steering":"reject"`) {
		t.Errorf("GET: %s; want the operator's message alone in the inbox, and steering reject", w.Body)
	}
}

// A message sent to a paused process waits; resumed, the process is
// unblocked by it, as the store's wake rule does.
func TestResumeJudgesTheInbox(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if w := b.do("POST", "/v1/processes/p_paused/messages", tokAlice, nil, `{"content": "still there?"}`); w.Code != 202 {
		t.Fatalf("message: %d %s", w.Code, w.Body)
	}
	w := b.do("POST", "/v1/processes/p_paused/resume", tokOlga, nil, "")
	var p Process
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != 200 || p.State != "READY" || !p.Queued {
		t.Errorf("resume: %d %s; want READY and queued (the message unblocked it)", w.Code, w.Body)
	}
}

// ?parent= lists a process's workers: an operator sees them all, a user
// those that are hers (a worker belongs to its parent's owner; one started
// before that has no owner), and the parent must be one the caller sees.
func TestListWorkers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, w := range []struct {
		id, parent, owner string
		state             lifecycle.State
	}{{"p_w1", "p_bob", "bob", lifecycle.Ready}, {"p_w2", "p_bob", "", lifecycle.Done}, {"p_w3", "p_alice", "alice", lifecycle.Ready}} {
		b.fake.add(w.id, w.owner, lifecycle.Status{State: w.state})
		b.fake.procs[w.id].Parent = w.parent
	}
	if got := b.listIDs(t, "/v1/processes?parent=p_bob", tokOlga, 200); !slices.Equal(got, []string{"p_w1", "p_w2"}) {
		t.Errorf("p_bob's workers for the operator: %v, want [p_w1 p_w2]", got)
	}
	if got := b.listIDs(t, "/v1/processes?parent=p_bob&state=DONE", tokOlga, 200); !slices.Equal(got, []string{"p_w2"}) {
		t.Errorf("p_bob's DONE workers: %v, want [p_w2]", got)
	}
	if got := b.listIDs(t, "/v1/processes?parent=p_bob", tokBob, 200); !slices.Equal(got, []string{"p_w1"}) {
		t.Errorf("p_bob's workers for bob: %v, want [p_w1] (p_w2 has no owner)", got)
	}
	b.listIDs(t, "/v1/processes?parent=p_bob", tokAlice, 404)
	b.listIDs(t, "/v1/processes?parent=p_nope", tokOlga, 404)
}

// A process whose worker runs a turn is not deleted: the answer names the
// worker.
func TestDeleteWithARunningWorker(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.add("p_busy", "alice", lifecycle.Status{State: lifecycle.Running})
	b.fake.procs["p_busy"].Parent = "p_alice"
	w := b.do("DELETE", "/v1/processes/p_alice", tokAlice, nil, "")
	if w.Code != 409 || !strings.Contains(w.Body.String(), `"process_running"`) ||
		!strings.Contains(w.Body.String(), "its worker p_busy is running a turn") {
		t.Errorf("delete: %d %s; want 409 process_running naming the worker", w.Code, w.Body)
	}
	if _, ok := b.fake.procs["p_alice"]; !ok {
		t.Error("the process was deleted")
	}
}

// A deletion is logged with who made it: the process's own log is gone.
// The answer and the log name the workers deleted with it.
func TestDeleteIsLogged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.add("p_worker", "bob", lifecycle.Status{State: lifecycle.Done})
	b.fake.procs["p_worker"].Parent = "p_bob"
	w := b.do("DELETE", "/v1/processes/p_bob", tokOlga, nil, "")
	var answer DeletedProcess
	if err := json.Unmarshal(w.Body.Bytes(), &answer); w.Code != 200 || err != nil {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	if answer.ID != "p_bob" || !slices.Equal(answer.Workers, []string{"p_worker"}) {
		t.Errorf("delete answered %s; want p_bob with deleted_workers [p_worker]", w.Body)
	}
	if entries := b.logs.FilterMessage("workers deleted").All(); len(entries) != 1 || entries[0].ContextMap()["process"] != "p_bob" {
		t.Errorf("log entries naming the workers deleted: %+v", entries)
	}
	entries := b.logs.FilterMessage("process deleted").All()
	if len(entries) != 1 {
		t.Fatalf("%d log entries say the process was deleted, want 1", len(entries))
	}
	got := entries[0].ContextMap()
	for k, want := range map[string]string{"process": "p_bob", "by": "operator:olga", "owner": "bob", "state": "BLOCKED"} {
		if got[k] != want {
			t.Errorf("log field %s = %v, want %q", k, got[k], want)
		}
	}
}

// TestListByRecipe checks that ?recipe= keeps one recipe's processes, with
// a state and for a user too, that a page the filter thins out reads on to
// fill up, and that a name no recipe can have is refused.
func TestListByRecipe(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i, p := range []struct {
		id, owner, recipe string
		state             lifecycle.State
	}{
		{"p_a1", "alice", "arthur", lifecycle.Blocked}, {"p_d1", "alice", "default", lifecycle.Blocked},
		{"p_d2", "bob", "default", lifecycle.Blocked}, {"p_d3", "bob", "default", lifecycle.Blocked},
		{"p_a2", "bob", "arthur", lifecycle.Done}, {"p_a3", "alice", "arthur", lifecycle.Ready},
	} {
		b.fake.add(p.id, p.owner, lifecycle.Status{State: p.state})
		b.fake.procs[p.id].Recipe = p.recipe
		b.fake.procs[p.id].CreatedAt = fakeNow.Add(time.Duration(i) * time.Millisecond)
	}
	for _, tc := range []struct {
		path, token string
		want        []string
	}{
		{"/v1/processes?recipe=arthur", tokOlga, []string{"p_a1", "p_a2", "p_a3"}},
		{"/v1/processes?recipe=arthur&state=DONE", tokOlga, []string{"p_a2"}},
		{"/v1/processes?recipe=arthur", tokAlice, []string{"p_a1", "p_a3"}},
		// The backend's first page holds one arthur: the list reads on
		// until it has two.
		{"/v1/processes?recipe=arthur&limit=2", tokOlga, []string{"p_a1", "p_a2"}},
		{"/v1/processes?recipe=marvin-worker", tokOlga, nil},
	} {
		if got := b.listIDs(t, tc.path, tc.token, http.StatusOK); !slices.Equal(got, tc.want) {
			t.Errorf("GET %s: %v, want %v", tc.path, got, tc.want)
		}
	}
	w := b.do("GET", "/v1/processes?recipe=Not%20A%20Name", tokOlga, nil, "")
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "not a recipe name") {
		t.Errorf("a bad recipe name: %d %s, want 400 saying it is not a recipe name", w.Code, w.Body)
	}
}

// listIDs returns the ids of the processes GET path lists for token,
// checking that it answers wantStatus.
func (b *bundle) listIDs(t *testing.T, path, token string, wantStatus int) []string {
	t.Helper()
	w := b.do("GET", path, token, nil, "")
	if w.Code != wantStatus {
		t.Fatalf("GET %s: %d %s, want %d", path, w.Code, w.Body, wantStatus)
	}
	var page ProcessPage
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range page.Processes {
		out = append(out, p.ID)
	}
	return out
}
