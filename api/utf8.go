package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// checkUTF8 refuses a body that is not UTF-8, as JSON must be (RFC 8259).
// encoding/json would turn each bad byte into U+FFFD without a word, and
// the process would read text its sender never wrote. The error names the
// field the byte is in, and where in the body it is.
func checkUTF8(body []byte) error {
	off := invalidUTF8(body)
	if off < 0 {
		return nil
	}
	where := "the body"
	switch path, key := jsonPathAt(body, off); {
	case key && path == "":
		where = "a key of the body's object"
	case key:
		where = fmt.Sprintf("a key of %q", path)
	case path != "":
		where = fmt.Sprintf("field %q", path)
	}
	return errorf(http.StatusBadRequest, CodeInvalidJSON,
		"%s: invalid UTF-8 (byte 0x%02x at offset %d of the body); JSON must be UTF-8: send the text encoded as UTF-8",
		where, body[off], off)
}

// invalidUTF8 returns the offset of the first byte of b that is not part
// of a UTF-8 character, or -1.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// jsonPathAt returns the path ("content", "metadata.k", "items[2]") of the
// string of body that holds byte off, or, when that string is a key, the
// path of its object and key true. It returns "" when off lies in no
// string, or the JSON is broken before it.
func jsonPathAt(body []byte, off int) (path string, key bool) {
	var stack []*jsonLevel
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		// InputOffset is the end of tok: the first token to end past off
		// holds it.
		holds := dec.InputOffset() > int64(off)
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &jsonLevel{object: true, inKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &jsonLevel{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if n := len(stack); n > 0 && stack[n-1].inKey {
				if holds {
					return jsonPath(stack[:n-1]), true
				}
				stack[n-1].key, stack[n-1].inKey = tok.(string), false
				continue
			}
			if holds {
				if _, ok := tok.(string); !ok {
					return "", false
				}
				return jsonPath(stack), false
			}
		}
		// A value has ended: its container reads the next key or item.
		if n := len(stack); n > 0 {
			if top := stack[n-1]; top.object {
				top.inKey = true
			} else {
				top.index++
			}
		}
	}
}

// jsonLevel is an object or array jsonPathAt is inside.
type jsonLevel struct {
	object bool
	key    string // object: the key of the value being read
	index  int    // array: the index of the value being read
	inKey  bool   // object: the next token is a key
}

// jsonPath writes the place of the values being read at each level as
// encoding/json names a field: "metadata.k", "items[2]".
func jsonPath(stack []*jsonLevel) string {
	var b strings.Builder
	for _, l := range stack {
		switch {
		case !l.object:
			fmt.Fprintf(&b, "[%d]", l.index)
		case b.Len() > 0:
			b.WriteString("." + l.key)
		default:
			b.WriteString(l.key)
		}
	}
	return b.String()
}
