package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInvalidUTF8 checks that a JSON body with a byte that is not UTF-8 is
// refused with a 400 naming where the byte is, and that nothing is done
// with it: encoding/json alone would take it, turned into U+FFFD.
func TestInvalidUTF8(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, token, body string
		want                    []string // in the error's message
	}{
		{"message content", "/v1/processes/p_alice/messages", tokAlice, "{\"content\": \"caf\xe9\"}",
			[]string{`field "content": invalid UTF-8 (byte 0xe9 at offset 16 of the body)`, "send the text encoded as UTF-8"}},
		{"a cut character", "/v1/processes/p_alice/messages", tokAlice, "{\"content\": \"caf\xc3\"}", []string{`field "content"`, "0xc3 at offset 16"}},
		{"a key", "/v1/processes/p_alice/messages", tokAlice, "{\"cont\xffent\": \"hi\"}", []string{`a key of the body's object: invalid UTF-8 (byte 0xff at offset 6`}},
		{"after the object", "/v1/processes/p_alice/messages", tokAlice, "{\"content\": \"hi\"} \xff", []string{`the body: invalid UTF-8`}},
		{"steer content", "/v1/processes/p_bob/steer", tokOlga, "{\"content\": \"\xff\"}", []string{`field "content"`}},
		{"create input", "/v1/processes", tokAlice, "{\"recipe\": \"default\", \"input\": \"\xfe\"}", []string{`field "input"`}},
		{"metadata value", "/v1/processes", tokAlice, "{\"recipe\": \"default\", \"metadata\": {\"k\": \"v\xff\"}}", []string{`field "metadata.k"`}},
		{"metadata key", "/v1/processes", tokAlice, "{\"recipe\": \"default\", \"metadata\": {\"k\xff\": \"v\"}}", []string{`a key of "metadata"`}},
		{"timer message", "/v1/processes/p_bob/timers", tokOlga, "{\"in\": \"1m\", \"message\": \"\xed\xa0\x80\"}", []string{`field "message"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			before := len(b.fake.order)
			w := b.do("POST", tt.path, tt.token, nil, tt.body)
			if w.Code != 400 || errorCode(w.Body.Bytes()) != CodeInvalidJSON {
				t.Fatalf("status %d %s, want 400 %s", w.Code, w.Body, CodeInvalidJSON)
			}
			for _, want := range tt.want {
				wantMessage(want)(t, w.Body.Bytes())
			}
			// Nothing was stored: no process, no message, no timer.
			for _, pid := range []string{"p_alice", "p_bob"} {
				if n := len(b.fake.logs[pid]) + len(b.fake.timers[pid]); n != 0 {
					t.Errorf("%s has %d events and timers after a refused body", pid, n)
				}
				if w := b.do("GET", "/v1/processes/"+pid+"/inbox", tokOlga, nil, ""); !strings.Contains(w.Body.String(), `"messages":[]`) {
					t.Errorf("%s's inbox after a refused body: %s", pid, w.Body)
				}
			}
			if n := len(b.fake.order); n != before {
				t.Errorf("%d processes were created", n-before)
			}
		})
	}
}

// UTF-8 text, U+FFFD written as such included, arrives as it was sent.
func TestValidUTF8Kept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const content = "café ☕ \U0001F600 \uFFFD"
	body, _ := json.Marshal(map[string]string{"content": content})
	if w := b.do("POST", "/v1/processes/p_alice/messages", tokAlice, nil, string(body)); w.Code != 202 {
		t.Fatalf("post: %d %s", w.Code, w.Body)
	}
	w := b.do("GET", "/v1/processes/p_alice/inbox", tokOlga, nil, "")
	var l InboxList
	if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil || len(l.Messages) != 1 {
		t.Fatalf("inbox: %s (%v)", w.Body, err)
	}
	if diff := cmp.Diff(content, l.Messages[0].Content); diff != "" {
		t.Errorf("stored content (-sent +stored):\n%s", diff)
	}
}

func TestJSONPathAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body     string
		wantPath string
		wantKey  bool
	}{
		{"{\"a\": \"\xff\"}", "a", false},
		{"{\"a\": 1, \"b\": \"x\xff\"}", "b", false},
		{"{\"a\": {\"b\": \"\xff\"}}", "a.b", false},
		{"{\"a\": [1, \"x\", {\"b\": \"\xff\"}]}", "a[2].b", false},
		{"{\"a\": [[], {}, \"\xff\"]}", "a[2]", false},
		{"[\"x\", \"\xff\"]", "[1]", false},
		{"{\"a\": {}, \"\xff\": 1}", "", true},
		{"{\"a\": [{\"\xff\": 1}]}", "a[0]", true},
		{"{\"a\": 1 \xff}", "", false}, // not in a string: broken JSON
		{"{\"a\" \"\xff\"}", "", false},
	}
	for _, tt := range tests {
		off := invalidUTF8([]byte(tt.body))
		path, key := jsonPathAt([]byte(tt.body), off)
		if path != tt.wantPath || key != tt.wantKey {
			t.Errorf("jsonPathAt(%q, %d) = %q, %v; want %q, %v", tt.body, off, path, key, tt.wantPath, tt.wantKey)
		}
	}
}
