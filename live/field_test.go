package live

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// feed gives r the fragments in turn and returns what each completed.
func feed(t *testing.T, r *FieldReader, fragments []string) []string {
	t.Helper()
	out := make([]string, len(fragments))
	for i, f := range fragments {
		out[i] = r.Feed(f)
		if !utf8.ValidString(out[i]) {
			t.Fatalf("Feed(%q) = %q: not valid UTF-8", f, out[i])
		}
	}
	return out
}

func TestFieldReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fragments []string
		want      []string // what each fragment completes
	}{
		{
			name:      "the field alone, cut anywhere",
			fragments: []string{`{"mess`, `age":"He`, `llo, wor`, `ld"}`},
			want:      []string{"", "He", "llo, wor", "ld"},
		},
		{
			name:      "after strings with escaped quotes and braces, numbers, booleans, null, objects and arrays",
			fragments: []string{`{"a":"x\"}{[\\","n":-1.5e3,"t":true,"f":false,"z":null,"o":{"k":[1,{"y":"]}"}],"e":{}},"l":[[],"}",{}],"message":"yes"}`},
			want:      []string{"yes"},
		},
		{
			name:      "a backslash at a fragment's end",
			fragments: []string{`{"message":"a\`, `nb\`, `"c\`, `\"}`},
			want:      []string{"a", "\nb", `"c`, `\`},
		},
		{
			name:      "every one-letter escape",
			fragments: []string{`{"message":"\"\\\/\b\f\n\r\t"}`},
			want:      []string{"\"\\/\b\f\n\r\t"},
		},
		{
			name:      `\u00e9 cut after each of its bytes`,
			fragments: []string{`{"message":"caf\`, `u`, `0`, `0`, `e`, `9`, `!"}`},
			want:      []string{"caf", "", "", "", "", "é", "!"},
		},
		{
			name:      "a surrogate pair, cut between its halves",
			fragments: []string{`{"message":"\ud83d`, `\ude00 \uD83D\uDE00"}`},
			want:      []string{"", "😀 😀"},
		},
		{
			name:      "lone surrogates are U+FFFD, and what follows them is kept",
			fragments: []string{`{"message":"\ud83dx \ud83d\u0041 \ude00 \ud83d\ud83d\ude00 \ud83d\n \ud83d`, `"}`},
			want:      []string{"\uFFFDx \uFFFDA \uFFFD \uFFFD😀 \uFFFD\n ", "\uFFFD"},
		},
		{
			name:      "a UTF-8 sequence cut by fragments comes whole",
			fragments: []string{"{\"message\":\"\xc3", "\xa9 \xf0\x9f", "\x98", "\x80\"}"},
			want:      []string{"", "é ", "", "😀"},
		},
		{
			name:      "bytes that are not UTF-8 are U+FFFD, as encoding/json has them",
			fragments: []string{"{\"message\":\"a\xffb\xe2\x82", "\"}"},
			want:      []string{"a\uFFFDb", "\uFFFD\uFFFD"},
		},
		{
			name:      "a key escaped is the key it stands for",
			fragments: []string{`{"mess\u0061ge":"hi"}`},
			want:      []string{"hi"},
		},
		{
			name:      "the key nested deeper does not count",
			fragments: []string{`{"data":{"message":"inner"},"list":[{"message":"item"}],"message":"outer"}`},
			want:      []string{"outer"},
		},
		{
			name:      "the key only nested deeper",
			fragments: []string{`{"data":{"message":"inner"}}`},
			want:      []string{""},
		},
		{
			name:      "the key as another key's value",
			fragments: []string{`{"key":"message","x":"message"}`},
			want:      []string{""},
		},
		{
			name:      "a value that is not a string",
			fragments: []string{`{"message":42,"message":"late"}`},
			want:      []string{""},
		},
		{
			name:      "a value that is an object",
			fragments: []string{`{"message":{"message":"inner"}}`},
			want:      []string{""},
		},
		{
			name:      "a repeated key: the first only",
			fragments: []string{`{"message":"first",`, `"message":"second"}`},
			want:      []string{"first", ""},
		},
		{
			name:      "white space anywhere",
			fragments: []string{" \n{ \"a\" : [ 1 , 2 ] ,\t\"b\"\r: true ,", " \"message\" \t:\r\n \"hi there\" \n}\n"},
			want:      []string{"", "hi there"},
		},
		{
			name:      "no such field",
			fragments: []string{`{"a":1}`, `{"message":"x"}`},
			want:      []string{"", ""},
		},
		{
			name:      "not an object",
			fragments: []string{`["message","x"]`},
			want:      []string{""},
		},
		{
			name:      "a bad literal before the field",
			fragments: []string{`{"a":tru,"message":"x"}`},
			want:      []string{""},
		},
		{
			name:      "a missing value before the field",
			fragments: []string{`{"a":,"message":"x"}`},
			want:      []string{""},
		},
		{
			name:      "a missing comma before the field",
			fragments: []string{`{"a":1 "message":"x"}`},
			want:      []string{""},
		},
		{
			name:      "brackets that do not match before the field",
			fragments: []string{`{"a":[1}, "message":"x"}`},
			want:      []string{""},
		},
		{
			name:      "a control character in the field stops the reading",
			fragments: []string{"{\"message\":\"bad \x01", " more\"}"},
			want:      []string{"bad ", ""},
		},
		{
			name:      "an unknown escape stops the reading",
			fragments: []string{`{"message":"ok\q more"}`},
			want:      []string{"ok"},
		},
		{
			name:      "a \\u escape with a bad digit stops the reading",
			fragments: []string{`{"message":"ok\u12x4 more"}`},
			want:      []string{"ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := feed(t, NewFieldReader("message"), tt.fragments)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pieces (-want +got):\n%s", diff)
			}
			doc := strings.Join(tt.fragments, "")
			if want, ok := decoded(doc, "message"); ok && want != strings.Join(got, "") {
				t.Errorf("pieces joined %q, json.Unmarshal gives %q", strings.Join(got, ""), want)
			}
		})
	}
}

// decoded is what json.Unmarshal gives for the first top-level field of
// the JSON object doc, "" when it is not a string; ok is false when doc is
// not a JSON object.
func decoded(doc, field string) (s string, ok bool) {
	if !json.Valid([]byte(doc)) {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", false
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return "", false
		}
		if key == field {
			_ = json.Unmarshal(value, &s) // "" for a value that is not a string
			return s, true
		}
	}
	return "", true
}

// TestFieldReaderSplits checks, on many objects, that the pieces joined
// are what json.Unmarshal gives for the field wherever the object is cut:
// at each byte, and at many random places.
func TestFieldReaderSplits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	g := generator{rng}
	var docs []string
	for range 300 {
		docs = append(docs, g.document("message"))
	}
	for range 100 {
		docs = append(docs, g.marshalled("message"))
	}
	for i, doc := range docs {
		want, ok := decoded(doc, "message")
		if !ok {
			t.Fatalf("document %d is not a JSON object: %q", i, doc)
		}
		check := func(fragments []string) {
			t.Helper()
			if got := strings.Join(feed(t, NewFieldReader("message"), fragments), ""); got != want {
				t.Fatalf("document %q cut as %q: got %q, want %q", doc, fragments, got, want)
			}
		}
		for at := range len(doc) + 1 {
			check([]string{doc[:at], doc[at:]})
		}
		for range 20 {
			check(cut(rng, doc))
		}
	}
}

// FuzzFieldReader checks that any text, however cut, gives the same valid
// UTF-8 pieces joined, and for a JSON object what json.Unmarshal gives for
// the field.
func FuzzFieldReader(f *testing.F) {
	for _, doc := range []string{
		`{"message":"Hello"}`,
		`{"a":"x\"}{","n":-1.5e3,"o":{"message":"no"},"message":"caf\u00e9 \ud83d\ude00"}`,
		`{"message":"\ud83d\u0041\ude00\ud83d"}`,
		"{\"message\":\"a\xffb\xe2\x82\"}",
		`{"message":42}`,
		`{"message":"ok\q"}`,
		`{"mess\u0061ge" : "hi" , "message":"no"}`,
	} {
		f.Add(doc, uint(3), uint(11))
	}
	f.Fuzz(func(t *testing.T, doc string, i, j uint) {
		whole := NewFieldReader("message").Feed(doc)
		if !utf8.ValidString(whole) {
			t.Fatalf("Feed(%q) = %q: not valid UTF-8", doc, whole)
		}
		a, b := int(i%uint(len(doc)+1)), int(j%uint(len(doc)+1))
		a, b = min(a, b), max(a, b)
		if got := strings.Join(feed(t, NewFieldReader("message"), []string{doc[:a], doc[a:b], doc[b:]}), ""); got != whole {
			t.Fatalf("%q cut at %d and %d gives %q, whole %q", doc, a, b, got, whole)
		}
		if want, ok := decoded(doc, "message"); ok && whole != want {
			t.Fatalf("%q gives %q, json.Unmarshal %q", doc, whole, want)
		}
	})
}

// cut cuts s at random places.
func cut(rng *rand.Rand, s string) []string {
	var out []string
	for len(s) > 0 {
		n := rng.IntN(min(len(s), 8)) + 1
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// generator writes random JSON objects.
type generator struct{ rng *rand.Rand }

// document is an object written by hand: white space between tokens, each
// character of a string raw or escaped (\u, surrogate pairs, one-letter
// escapes), lone surrogates and bytes that are not UTF-8, the field
// (mostly a string) among other keys and nested deeper.
func (g generator) document(field string) string {
	var b strings.Builder
	g.space(&b)
	b.WriteByte('{')
	n, at := g.rng.IntN(5), -1
	if g.rng.IntN(8) > 0 {
		at = g.rng.IntN(n + 1)
	}
	for i := range n + 1 {
		key := g.text()
		if i == at {
			key = field
		}
		if i > 0 {
			b.WriteByte(',')
		}
		g.space(&b)
		g.string(&b, key, false)
		g.space(&b)
		b.WriteByte(':')
		g.space(&b)
		if i == at && g.rng.IntN(6) > 0 {
			g.string(&b, g.text(), true)
		} else {
			g.value(&b, field, 0)
		}
		g.space(&b)
	}
	b.WriteByte('}')
	g.space(&b)
	return b.String()
}

// marshalled is an object encoding/json writes, of random strings.
func (g generator) marshalled(field string) string {
	v := map[string]any{field: g.text()}
	for range g.rng.IntN(4) {
		v[g.text()] = map[string]any{field: g.text(), "n": g.rng.Float64()}
	}
	for _, k := range []string{"a", "m", "z"} {
		if g.rng.IntN(2) == 0 {
			v[k] = g.text()
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// text is a random string of characters JSON escapes or not: ASCII,
// quotes, backslashes, braces, control characters, é, €, U+2028, U+FFFD,
// 中, and 😀 beyond the BMP.
func (g generator) text() string {
	const pool = "ab z\"\\/{}[]:,\x00\x01\n\t\x1féé€\u2028\ufffd中😀😀"
	runes := []rune(pool)
	var b strings.Builder
	for range g.rng.IntN(12) {
		b.WriteRune(runes[g.rng.IntN(len(runes))])
	}
	return b.String()
}

// string writes s as a JSON string, each character raw or escaped at
// random, with now and then, when junk, a lone surrogate or a byte that is
// not UTF-8.
func (g generator) string(b *strings.Builder, s string, junk bool) {
	b.WriteByte('"')
	for _, c := range s {
		switch short := strings.IndexRune(unescaped, c); {
		case junk && g.rng.IntN(20) == 0:
			b.WriteString([]string{`\ud800`, `\uDFFF`, "\xff", "\xe2\x82"}[g.rng.IntN(4)])
			fallthrough
		case c < 0x20 || c == '"' || c == '\\' || g.rng.IntN(4) == 0:
			if short >= 0 && g.rng.IntN(2) == 0 {
				b.WriteByte('\\')
				b.WriteByte(escapes[short])
				break
			}
			for _, u := range utf16Of(c) {
				fmt.Fprintf(b, []string{`\u%04x`, `\u%04X`}[g.rng.IntN(2)], u)
			}
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}

// utf16Of is c in UTF-16: one unit, or a surrogate pair.
func utf16Of(c rune) []rune {
	if c < 0x10000 {
		return []rune{c}
	}
	c -= 0x10000
	return []rune{0xd800 + c>>10, 0xdc00 + c&0x3ff}
}

// value writes a random value: scalars, strings, and objects and arrays
// that may hold the field.
func (g generator) value(b *strings.Builder, field string, depth int) {
	kinds := 6
	if depth > 2 {
		kinds = 4
	}
	switch g.rng.IntN(kinds) {
	case 0:
		b.WriteString([]string{"0", "-1.5e3", "42", "3.14E-2", "-0.0"}[g.rng.IntN(5)])
	case 1:
		b.WriteString([]string{"true", "false", "null"}[g.rng.IntN(3)])
	case 2, 3:
		g.string(b, g.text(), true)
	case 4:
		b.WriteByte('{')
		for i := range g.rng.IntN(3) {
			if i > 0 {
				b.WriteByte(',')
			}
			g.space(b)
			g.string(b, []string{field, g.text()}[g.rng.IntN(2)], false)
			b.WriteByte(':')
			g.value(b, field, depth+1)
		}
		b.WriteByte('}')
	case 5:
		b.WriteByte('[')
		for i := range g.rng.IntN(3) {
			if i > 0 {
				b.WriteByte(',')
			}
			g.value(b, field, depth+1)
			g.space(b)
		}
		b.WriteByte(']')
	}
}

// space writes JSON white space, often none.
func (g generator) space(b *strings.Builder) {
	for g.rng.IntN(3) == 0 {
		b.WriteByte(" \t\n\r"[g.rng.IntN(4)])
	}
}
