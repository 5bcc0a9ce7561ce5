package live

import (
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// FieldReader reads the text of one top-level string field of a JSON
// object as the object streams in fragments: the answer of a turn's ending
// tool (respond's message, finish_task's result) while the model writes the
// call's arguments.
//
// It is a small state machine fed byte by byte. A key, or the value of
// another key, is kept until it ends and then checked by encoding/json; the
// field's value is decoded as it comes, an escape or a UTF-8 sequence cut
// by a fragment's end held until it is whole. Reading stops for good at the
// end of the field's value (a repeated key is not read again), at the end
// of the object, when the field's value is not a string, and once the text
// proves not to be JSON.
type FieldReader struct {
	field string
	state readState

	// A key or another key's value, as far as it came.
	buf     []byte
	depth   int  // the arrays and objects open in the value
	quoted  bool // inside a string of it
	escaped bool // right after a backslash in that string
	matched bool // the last key read is the field

	// The field's value.
	code rune   // the hex digits of a \u escape read so far
	hex  int    // how many
	high rune   // a high surrogate waiting for its low half; 0 when none
	raw  []byte // the start of a UTF-8 sequence not yet whole
}

// readState is where a FieldReader is in the object.
type readState int

const (
	beforeObject readState = iota // before its opening brace
	beforeKey                     // after the brace or a comma
	inKey                         // in a key
	afterKey                      // before the key's colon
	beforeValue                   // after the colon
	inValue                       // in another key's value
	afterValue                    // before a comma or the closing brace
	inField                       // in the field's string
	inEscape                      // right after a backslash in it
	inUnicode                     // in the hex digits of its \u escape
	stopped                       // nothing more to read
)

// betweenTokens reports whether white space means nothing in state s.
func (s readState) betweenTokens() bool {
	switch s {
	case beforeObject, beforeKey, afterKey, beforeValue, afterValue:
		return true
	}
	return false
}

// NewFieldReader returns a reader of the top-level string field named field.
func NewFieldReader(field string) *FieldReader {
	return &FieldReader{field: field}
}

// Feed takes the next fragment and returns the characters of the field's
// value that it completed (decoded, escapes resolved, valid UTF-8), "" when
// none. The pieces of all fragments, joined, are the field's value as
// json.Unmarshal gives it.
func (r *FieldReader) Feed(fragment string) string {
	var out []byte
	for i := 0; i < len(fragment) && r.state != stopped; i++ {
		out = r.step(fragment[i], out)
	}
	return string(out)
}

// step reads byte c, appending to out what it completes of the field.
func (r *FieldReader) step(c byte, out []byte) []byte {
	if isSpace(c) && r.state.betweenTokens() {
		return out
	}
	switch r.state {
	case beforeObject:
		r.expect(c == '{', beforeKey)
	case beforeKey:
		// A closing brace here ends the object without the field (or is a
		// trailing comma's, not JSON): either way, nothing more to read.
		r.expect(c == '"', inKey)
		r.buf, r.quoted = append(r.buf[:0], c), true
	case inKey:
		r.buf = append(r.buf, c)
		if r.inString(c) {
			return out
		}
		var key string
		r.expect(json.Unmarshal(r.buf, &key) == nil, afterKey)
		r.matched = key == r.field
	case afterKey:
		r.expect(c == ':', beforeValue)
	case beforeValue:
		if r.matched {
			r.expect(c == '"', inField) // not a string: no text to show
			return out
		}
		r.buf, r.depth, r.state = r.buf[:0], 0, inValue
		return r.step(c, out)
	case inValue:
		if r.skip(c) {
			return r.step(c, out)
		}
	case afterValue:
		r.expect(c == ',', beforeKey)
	case inField:
		return r.fieldByte(c, out)
	case inEscape:
		return r.escape(c, out)
	case inUnicode:
		return r.hexDigit(c, out)
	}
	return out
}

// expect moves to state next when ok, else stops.
func (r *FieldReader) expect(ok bool, next readState) {
	if ok {
		r.state = next
	} else {
		r.state = stopped
	}
}

// inString takes byte c of a string and reports whether the string goes
// on after it.
func (r *FieldReader) inString(c byte) bool {
	switch {
	case r.escaped:
		r.escaped = false
	case c == '\\':
		r.escaped = true
	case c == '"':
		r.quoted = false
	}
	return r.quoted
}

// skip takes byte c of another key's value. It reports whether c came
// after the value instead, ending a number, true, false or null: c is then
// to be read after it.
func (r *FieldReader) skip(c byte) (after bool) {
	switch {
	case r.quoted:
		r.buf = append(r.buf, c)
		if !r.inString(c) && r.depth == 0 {
			r.endValue()
		}
		return false
	case r.depth == 0 && len(r.buf) > 0 && (c == ',' || c == '}' || c == ']' || isSpace(c)):
		// At depth 0 a string or a container has ended already: the value
		// is a number or a literal.
		r.endValue()
		return true
	}
	r.buf = append(r.buf, c)
	switch c {
	case '"':
		r.quoted = true
	case '{', '[':
		r.depth++
	case '}', ']':
		if r.depth--; r.depth <= 0 {
			r.endValue()
		}
	}
	return false
}

// endValue checks the value skipped, whole.
func (r *FieldReader) endValue() {
	r.expect(json.Valid(r.buf), afterValue)
}

// fieldByte takes byte c of the field's string.
func (r *FieldReader) fieldByte(c byte, out []byte) []byte {
	switch {
	case c == '"':
		r.state = stopped
		return r.flushHigh(r.flushRaw(out))
	case c == '\\':
		r.state = inEscape
		return r.flushRaw(out)
	case c < 0x20: // not allowed in a JSON string
		r.state = stopped
		return out
	}
	out = r.flushHigh(out)
	r.raw = append(r.raw, c)
	for len(r.raw) > 0 && utf8.FullRune(r.raw) {
		out = r.decodeRaw(out)
	}
	return out
}

// escapes are the one-letter escapes of a JSON string, and what each
// stands for, at the same place.
const escapes, unescaped = `"\/bfnrt`, "\"\\/\b\f\n\r\t"

// escape takes byte c after a backslash in the field's string.
func (r *FieldReader) escape(c byte, out []byte) []byte {
	if c == 'u' {
		r.state, r.code, r.hex = inUnicode, 0, 0
		return out
	}
	i := strings.IndexByte(escapes, c)
	if i < 0 {
		r.state = stopped
		return out
	}
	r.state = inField
	return append(r.flushHigh(out), unescaped[i])
}

// hexDigit takes byte c of a \u escape of the field's string.
func (r *FieldReader) hexDigit(c byte, out []byte) []byte {
	var d byte
	switch {
	case '0' <= c && c <= '9':
		d = c - '0'
	case 'a' <= c && c <= 'f':
		d = c - 'a' + 10
	case 'A' <= c && c <= 'F':
		d = c - 'A' + 10
	default:
		r.state = stopped
		return out
	}
	r.code = r.code<<4 | rune(d)
	if r.hex++; r.hex < 4 {
		return out
	}
	r.state = inField
	return r.unicode(out)
}

// unicode appends the character of a whole \u escape as encoding/json
// decodes it: a high surrogate waits for the escape after it, with which
// it makes one character when that is its low half; a half without its
// other is U+FFFD.
func (r *FieldReader) unicode(out []byte) []byte {
	c := r.code
	if r.high != 0 {
		if pair := utf16.DecodeRune(r.high, c); pair != utf8.RuneError {
			r.high = 0
			return utf8.AppendRune(out, pair)
		}
		out = r.flushHigh(out)
	}
	if 0xd800 <= c && c < 0xdc00 {
		r.high = c
		return out
	}
	return utf8.AppendRune(out, c) // U+FFFD for a low half alone
}

// flushHigh appends U+FFFD for a high surrogate that the next character
// left without its pair.
func (r *FieldReader) flushHigh(out []byte) []byte {
	if r.high == 0 {
		return out
	}
	r.high = 0
	return utf8.AppendRune(out, utf8.RuneError)
}

// flushRaw appends what is left of a UTF-8 sequence that the string's
// next escape or its end cut short.
func (r *FieldReader) flushRaw(out []byte) []byte {
	for len(r.raw) > 0 {
		out = r.decodeRaw(out)
	}
	return out
}

// decodeRaw moves the first character of raw to out; a byte that does not
// start a valid UTF-8 sequence is U+FFFD, as encoding/json has it.
func (r *FieldReader) decodeRaw(out []byte) []byte {
	c, n := utf8.DecodeRune(r.raw)
	r.raw = r.raw[:copy(r.raw, r.raw[n:])]
	return utf8.AppendRune(out, c)
}

// isSpace reports whether c is white space between JSON tokens.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
