package conversation

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// awkward are strings json.Marshal escapes, one way or another.
var awkward = []string{"", "plain", `quote " back \ slash`, "<b>&amp;</b>", "line\nbreak\ttab\rcr\bbs\fff",
	"\x00\x01\x1f\x7f", "ça va? アリス 👋", "\u2028\u2029", "bad \xff\xfe utf-8", "\xe2\x80", "/slash/"}

// fill sets every field of v, however deep: strings to s, numbers to n,
// booleans to true, pointers and slices to values filled alike, raw JSON
// to JSON that json.Marshal compacts and escapes.
func fill(v reflect.Value, s string, n int) {
	switch {
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"a" : "<b> & ` + "\u2028" + `",` + "\n\t" + `"n": [1, 2.5e-7, null, true]}`))
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 11, 30, 2, 40, 1, 120000000, time.FixedZone("CET", 3600))))
	}
	if v.Type() == reflect.TypeFor[json.RawMessage]() || v.Type() == reflect.TypeFor[time.Time]() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int:
		v.SetInt(int64(n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float64:
		v.SetFloat(float64(n) / 3)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), s, n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), s, n+i)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), s, n+i)
			}
		}
	}
}

// sameAsMarshal checks that AppendJSON writes what json.Marshal writes,
// or fails where it fails.
func sameAsMarshal(t *testing.T, what string, e *Event) {
	t.Helper()
	want, wantErr := json.Marshal(e)
	prefix := []byte("[")
	got, err := e.AppendJSON(prefix)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: AppendJSON error %v, json.Marshal error %v", what, err, wantErr)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got[1:], want) || got[0] != '[' {
		t.Fatalf("%s:\nAppendJSON   %s\njson.Marshal %s", what, got[1:], want)
	}
}

// TestAppendJSON holds AppendJSON to json.Marshal: for events with every
// field of every payload set (a field added to a payload and not to
// AppendJSON fails here), with strings that need escaping, for each
// payload alone, for blocks of each kind, and where json.Marshal fails.
func TestAppendJSON(t *testing.T) {
	t.Parallel()
	for _, s := range awkward {
		var all Event
		fill(reflect.ValueOf(&all).Elem(), s, 7)
		sameAsMarshal(t, "every field, "+s, &all)
		ev := reflect.ValueOf(all)
		for i := range ev.NumField() {
			if f := ev.Field(i); f.Kind() == reflect.Pointer {
				one := Event{Type: all.Type, At: all.At}
				reflect.ValueOf(&one).Elem().Field(i).Set(f)
				sameAsMarshal(t, ev.Type().Field(i).Name+" alone, "+s, &one)
			}
		}
		blocks := []Block{TextBlock(""), TextBlock(s), MarkdownBlock(s).For(RoleUser), {Type: BlockImage, Data: s, MimeType: "image/png"},
			{Type: BlockResource, Resource: &Resource{URI: s}}, {Type: "other"}}
		sameAsMarshal(t, "blocks, "+s, &Event{Type: TypeToolCallResponse,
			ToolCallResponse: &ToolCallResponse{CallID: s, Name: s, Content: blocks}})
	}
	sameAsMarshal(t, "the zero event", &Event{})
	sameAsMarshal(t, "an empty result", &Event{ToolCallResponse: &ToolCallResponse{Content: []Block{}}})
	for _, p := range []float64{0, 1, -2.5, 1e-7, 123456789, 1e21, 1e-300, math.MaxFloat64} {
		e := Event{ToolCallResponse: &ToolCallResponse{Content: []Block{{Type: BlockText, Annotations: &Annotations{Priority: &p}}}}}
		sameAsMarshal(t, "priority", &e)
	}
	for what, e := range map[string]Event{
		"invalid arguments": {ToolCallRequest: &ToolCallRequest{Arguments: json.RawMessage(`{"a":`)}},
		"NaN priority": {ToolCallResponse: &ToolCallResponse{Content: []Block{
			{Type: BlockText, Annotations: &Annotations{Priority: new(math.NaN())}}}}},
		"year 10000":    {At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"year -1":       {At: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		"offset of 24h": {At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 24*3600))},
	} {
		if _, err := e.AppendJSON(nil); err == nil {
			t.Errorf("%s: AppendJSON succeeded, json.Marshal does not", what)
		}
		sameAsMarshal(t, what, &e)
	}
}

// FuzzAppendJSONString holds appendJSONString to json.Marshal of a string.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Add(strings.Repeat("é<", 100))
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, json.Marshal %s", s, got, want)
		}
	})
}
