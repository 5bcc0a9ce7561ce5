package conversation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends the JSON of e to dst and returns it: the bytes
// json.Marshal writes (field order, omitempty, HTML-safe escaping, raw
// JSON compacted), several times faster, since every event a turn adds is
// encoded for the log. It fails where json.Marshal fails: raw JSON that is
// not valid, a time it cannot write, a priority that is not a number.
// TestAppendJSON holds it to json.Marshal, every field of every payload
// set.
func (e *Event) AppendJSON(dst []byte) ([]byte, error) {
	w := jsonWriter{b: dst}
	w.event(e)
	if w.err != nil {
		return dst, fmt.Errorf("encode %s event: %w", e.Type, w.err)
	}
	return w.b, nil
}

// jsonWriter appends JSON to b; the first error stops it.
type jsonWriter struct {
	b   []byte
	err error
}

// open starts an object; each field then starts with key.
func (w *jsonWriter) open() { w.b = append(w.b, '{') }

func (w *jsonWriter) close() { w.b = append(w.b, '}') }

// key writes the name of a field, after a comma unless it is the object's
// first.
func (w *jsonWriter) key(name string) {
	if c := w.b[len(w.b)-1]; c != '{' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) str(name, s string) {
	w.key(name)
	w.b = appendJSONString(w.b, s)
}

// optStr writes a string field tagged omitempty.
func (w *jsonWriter) optStr(name, s string) {
	if s != "" {
		w.str(name, s)
	}
}

func (w *jsonWriter) int(name string, n int) {
	w.key(name)
	w.b = strconv.AppendInt(w.b, int64(n), 10)
}

func (w *jsonWriter) optInt(name string, n int) {
	if n != 0 {
		w.int(name, n)
	}
}

func (w *jsonWriter) optTrue(name string, v bool) {
	if v {
		w.key(name)
		w.b = append(w.b, "true"...)
	}
}

// optRaw writes raw JSON tagged omitempty, compacted and HTML-escaped as
// json.Marshal writes a json.RawMessage.
func (w *jsonWriter) optRaw(name string, m json.RawMessage) {
	if len(m) == 0 {
		return
	}
	w.key(name)
	if !json.Valid(m) {
		w.fail(fmt.Errorf("%s: invalid JSON", name))
		return
	}
	if !bytes.ContainsAny(m, " \t\r\n<>&\u2028\u2029") {
		w.b = append(w.b, m...) // compact already, nothing to escape
		return
	}
	var compact, escaped bytes.Buffer
	if err := json.Compact(&compact, m); err != nil {
		w.fail(err)
		return
	}
	json.HTMLEscape(&escaped, compact.Bytes())
	w.b = append(w.b, escaped.Bytes()...)
}

func (w *jsonWriter) time(name string, t time.Time) {
	w.key(name)
	_, off := t.Zone()
	if y := t.Year(); y < 0 || y > 9999 || off <= -24*3600 || off >= 24*3600 {
		b, err := t.MarshalJSON() // what json.Marshal makes of such a time
		w.b = append(w.b, b...)
		w.fail(err)
		return
	}
	w.b = append(w.b, '"')
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	w.b = append(w.b, '"')
}

// float writes f as json.Marshal writes a float64.
func (w *jsonWriter) float(name string, f float64) {
	w.key(name)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		w.fail(fmt.Errorf("%s: unsupported value %v", name, f))
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if n := len(w.b); format == 'e' && n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
		w.b[n-2] = w.b[n-1] // e-07 as e-7
		w.b = w.b[:n-1]
	}
}

// fail keeps the first error.
func (w *jsonWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *jsonWriter) event(e *Event) {
	w.open()
	w.optStr("id", e.ID)
	w.str("type", string(e.Type))
	w.time("at", e.At)
	w.optStr("turn", e.Turn)
	w.optStr("by", e.By)
	if p := e.TurnStart; p != nil {
		w.key("turn_start")
		w.open()
		w.optStr("reason", p.Reason)
		w.close()
	}
	if p := e.InboxMessage; p != nil {
		w.key("inbox_message")
		w.open()
		w.str("message_id", p.MessageID)
		w.str("kind", string(p.Kind))
		w.optStr("from", p.From)
		w.str("content", p.Content)
		w.optTrue("during_turn", p.DuringTurn)
		w.close()
	}
	if p := e.ChatResponse; p != nil {
		w.key("chat_response")
		w.open()
		w.str("variant", string(p.Variant))
		w.optStr("text", p.Text)
		w.optRaw("structured", p.Structured)
		w.optStr("signature", p.Signature)
		w.payload("payload", p.Payload)
		w.citations(p.Citations)
		w.roles("audience", p.Audience)
		w.close()
	}
	if p := e.ToolCallRequest; p != nil {
		w.key("tool_call_request")
		w.open()
		w.str("call_id", p.CallID)
		w.str("name", p.Name)
		w.optRaw("arguments", p.Arguments)
		w.payload("payload", p.Payload)
		w.close()
	}
	if p := e.ToolCallResponse; p != nil {
		w.key("tool_call_response")
		w.open()
		w.str("call_id", p.CallID)
		w.str("name", p.Name)
		if len(p.Content) > 0 {
			w.key("content")
			w.b = append(w.b, '[')
			for i := range p.Content {
				if i > 0 {
					w.b = append(w.b, ',')
				}
				w.block(&p.Content[i])
			}
			w.b = append(w.b, ']')
		}
		w.optTrue("is_error", p.IsError)
		w.citations(p.Citations)
		w.close()
	}
	if p := e.ValidationCorrection; p != nil {
		w.key("validation_correction")
		w.open()
		w.str("validator", p.Validator)
		w.int("attempt", p.Attempt)
		w.str("text", p.Text)
		w.optStr("call_id", p.CallID)
		w.close()
	}
	if p := e.StateChange; p != nil {
		w.key("state_change")
		w.open()
		w.str("from", p.From)
		w.str("to", p.To)
		w.str("event", p.Event)
		w.close()
	}
	if p := e.SystemNotice; p != nil {
		w.key("system_notice")
		w.open()
		w.str("code", p.Code)
		w.str("text", p.Text)
		w.close()
	}
	if p := e.HostedActivity; p != nil {
		w.key("hosted_activity")
		w.open()
		w.str("activity_id", p.ActivityID)
		w.str("name", p.Name)
		w.str("state", string(p.State))
		w.optRaw("input", p.Input)
		w.optStr("summary", p.Summary)
		w.payload("payload", p.Payload)
		w.optInt("text_at", p.TextAt)
		w.close()
	}
	if p := e.Presentation; p != nil {
		w.key("presentation")
		w.open()
		w.str("call_id", p.CallID)
		w.str("summary", p.Summary)
		w.optRaw("blocks", p.Blocks)
		w.optStr("markdown", p.Markdown)
		w.close()
	}
	if p := e.ModelUsage; p != nil {
		w.key("model_usage")
		w.open()
		w.optStr("provider", p.Provider)
		w.optStr("model", p.Model)
		w.int("input_tokens", p.InputTokens)
		w.int("output_tokens", p.OutputTokens)
		w.optInt("cleared_results", p.ClearedResults)
		w.optInt("dropped_messages", p.DroppedMessages)
		w.close()
	}
	// Rare events: encoding/json writes them.
	if p := e.ApprovalRequested; p != nil {
		w.key("approval_requested")
		w.marshal(p)
	}
	if p := e.ApprovalDecided; p != nil {
		w.key("approval_decided")
		w.marshal(p)
	}
	if p := e.PhaseChange; p != nil {
		w.key("phase_change")
		w.open()
		w.optStr("from", p.From)
		w.optStr("to", p.To)
		w.str("reason", p.Reason)
		w.optRaw("result", p.Result)
		w.close()
	}
	w.close()
}

// marshal writes v as json.Marshal does.
func (w *jsonWriter) marshal(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.fail(err)
		return
	}
	w.b = append(w.b, b...)
}

// block writes b as Block.MarshalJSON does: a text block always has its
// text.
func (w *jsonWriter) block(b *Block) {
	w.open()
	w.str("type", string(b.Type))
	if b.Type == BlockText {
		w.str("text", b.Text)
	} else {
		w.optStr("text", b.Text)
	}
	w.optStr("mimeType", b.MimeType)
	w.optStr("data", b.Data)
	if r := b.Resource; r != nil {
		w.key("resource")
		w.open()
		w.str("uri", r.URI)
		w.optStr("mimeType", r.MimeType)
		w.optStr("text", r.Text)
		w.optStr("blob", r.Blob)
		w.close()
	}
	if a := b.Annotations; a != nil {
		w.key("annotations")
		w.open()
		w.roles("audience", a.Audience)
		if a.Priority != nil {
			w.float("priority", *a.Priority)
		}
		w.optStr("lastModified", a.LastModified)
		w.close()
	}
	w.close()
}

func (w *jsonWriter) roles(name string, roles []Role) {
	if len(roles) == 0 {
		return
	}
	w.key(name)
	w.b = append(w.b, '[')
	for i, r := range roles {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendJSONString(w.b, string(r))
	}
	w.b = append(w.b, ']')
}

func (w *jsonWriter) payload(name string, p *ProviderPayload) {
	if p == nil {
		return
	}
	w.key(name)
	w.open()
	w.str("provider", p.Provider)
	w.str("format", p.Format)
	w.optStr("version", p.Version)
	w.optRaw("value", p.Value)
	w.close()
}

func (w *jsonWriter) citations(cs []Citation) {
	if len(cs) == 0 {
		return
	}
	w.key("citations")
	w.b = append(w.b, '[')
	for i := range cs {
		c := &cs[i]
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.open()
		w.key("source")
		w.open()
		w.str("url", c.Source.URL)
		w.optStr("title", c.Source.Title)
		w.close()
		w.optStr("excerpt", c.Excerpt)
		if r := c.Range; r != nil {
			w.key("range")
			w.open()
			w.int("start", r.Start)
			w.int("end", r.End)
			w.close()
		}
		w.payload("replay", c.Replay)
		w.optTrue("incomplete", c.Incomplete)
		w.close()
	}
	w.b = append(w.b, ']')
}

// appendJSONString appends s as a JSON string, escaped as json.Marshal
// escapes it: HTML-safe (<, > and & as \u003c, \u003e, \u0026), U+2028 and
// U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control characters, <, > and &
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
