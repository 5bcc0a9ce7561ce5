package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
)

// goldenEvents returns conversation's golden events (one of every type,
// every field set), as the log stores them: compact JSON.
func goldenEvents(t testing.TB) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../conversation/testdata/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("conversation's golden events: %d files, %v", len(files), err)
	}
	out := make(map[string]string, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = b.String()
	}
	return out
}

// TestDecodeEventJSON checks that the log's decoder reads every type of
// event, every field set, as encoding/json does, and refuses what it
// refuses.
func TestDecodeEventJSON(t *testing.T) {
	for name, data := range goldenEvents(t) {
		var want conversation.Event
		if err := json.Unmarshal([]byte(data), &want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want.ID = "5-0"
		got, err := decodeEventJSON("5-0", data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-encoding/json +decodeEventJSON):\n%s", name, diff)
		}
	}
	for _, bad := range []string{`{"type":"turn_start"`, `{"type":`, `not json`, `{"at":"yesterday"}`, `{"type":"tool_call_request","tool_call_request":{"arguments":{]}}`} {
		if json.Unmarshal([]byte(bad), new(conversation.Event)) == nil {
			t.Fatalf("encoding/json takes %s", bad)
		}
		if _, err := decodeEventJSON("5-0", bad); err == nil || !strings.Contains(err.Error(), "store: event 5-0: corrupt JSON") {
			t.Errorf("decodeEventJSON(%s) = %v, want a corrupt JSON error", bad, err)
		}
	}
}

// BenchmarkDecodeEvent decodes one of every type of event (conversation's
// golden events) with encoding/json and with the log's decoder.
func BenchmarkDecodeEvent(b *testing.B) {
	events := goldenEvents(b)
	for _, dec := range []struct {
		name string
		f    func(string) error
	}{
		{"encoding-json", func(data string) error { return json.Unmarshal([]byte(data), new(conversation.Event)) }},
		{"log", func(data string) error { _, err := decodeEventJSON("5-0", data); return err }},
	} {
		b.Run(dec.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, data := range events {
					if err := dec.f(data); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
		})
	}
}

// BenchmarkReadTemplate reads events the scripts wrote from templates, one
// of each, as a claim reading a log back does.
func BenchmarkReadTemplate(b *testing.B) {
	tpl, err := newTemplates()
	if err != nil {
		b.Fatal(err)
	}
	var events []string
	for _, parts := range tpl.parts {
		var data strings.Builder
		data.WriteString(parts[0])
		for i := 1; i+1 < len(parts); i += 2 {
			val := "node:n1"
			if parts[i] == "at" {
				val = "2026-03-14T09:26:53.123Z"
			}
			q, _ := json.Marshal(val)
			data.Write(q)
			data.WriteString(parts[i+1])
		}
		events = append(events, data.String())
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, data := range events {
			if _, ok := tpl.read(data); !ok {
				b.Fatalf("%s is not read as a template's", data)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}
