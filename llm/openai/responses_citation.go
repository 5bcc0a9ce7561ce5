package openai

import (
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// textParts follows the text parts of a Responses API answer, to place the
// sources its annotations cite: each part's text and where it starts in the
// answer as collected (all text deltas joined), and the annotations waiting
// for their message to end.
//
// OpenAI gives an annotation's span as character offsets into its own text
// part; llm wants byte offsets into the whole answer. Characters are taken
// to be Unicode code points (the API's documentation says "character" and
// its servers count like Python strings). A part's text is assumed to
// stream in one run, as OpenAI sends it, not interleaved with another's.
type textParts struct {
	parts     []*textSpan // in order of appearance
	byKey     map[partKey]*textSpan
	collected int // bytes of text delivered so far
}

// partKey names one content part of one output item.
type partKey struct {
	item    string
	content int64
}

type textSpan struct {
	key   partKey
	base  int // byte offset of the part's text in the answer; -1 before any
	text  strings.Builder
	seen  map[int64]bool // the annotation indexes taken
	notes []annotation   // annotations not yet sent
}

// annotation is an annotation of a text part, whichever event carried it.
type annotation struct {
	kind, url, title string
	start, end       int64  // character offsets into the part's text
	ranged           bool   // start and end were sent
	raw              string // the annotation as received
}

func (t *textParts) part(item string, content int64) *textSpan {
	k := partKey{item, content}
	if p := t.byKey[k]; p != nil {
		return p
	}
	if t.byKey == nil {
		t.byKey = make(map[partKey]*textSpan)
	}
	p := &textSpan{key: k, base: -1, seen: map[int64]bool{}}
	t.byKey[k] = p
	t.parts = append(t.parts, p)
	return p
}

// add records a text delta of a part.
func (t *textParts) add(item string, content int64, delta string) {
	p := t.part(item, content)
	if p.base < 0 {
		p.base = t.collected
	}
	p.text.WriteString(delta)
	t.collected += len(delta)
}

// annotate records the index-th annotation of a part, once: it may arrive
// in its own event and again in the finished message.
func (t *textParts) annotate(item string, content, index int64, a annotation) {
	p := t.part(item, content)
	if p.seen[index] {
		return
	}
	p.seen[index] = true
	p.notes = append(p.notes, a)
}

// done takes the annotations of a finished message item (those no event
// announced) and returns the citations of all its parts.
func (t *textParts) done(item string, msg *responses.ResponseOutputItemUnion) []llm.Part {
	for j, c := range msg.Content {
		for k, an := range c.Annotations {
			t.annotate(item, int64(j), int64(k), annotation{
				kind: an.Type, url: an.URL, title: an.Title, start: an.StartIndex, end: an.EndIndex,
				ranged: an.JSON.StartIndex.Valid() && an.JSON.EndIndex.Valid(), raw: an.RawJSON(),
			})
		}
	}
	var out []llm.Part
	for _, p := range t.parts {
		if p.key.item == item {
			out = p.citations(out)
		}
	}
	return out
}

// rest returns the citations not yet sent, of every part.
func (t *textParts) rest() []llm.Part {
	var out []llm.Part
	for _, p := range t.parts {
		out = p.citations(out)
	}
	return out
}

// citations appends the url citations waiting in p and forgets them.
// Annotations of other kinds (files) are skipped.
func (p *textSpan) citations(out []llm.Part) []llm.Part {
	text := p.text.String()
	for _, a := range p.notes {
		if a.kind != "url_citation" || a.url == "" {
			continue
		}
		c := conversation.Citation{Source: conversation.Source{URL: a.url, Title: a.title}}
		if a.ranged && p.base >= 0 {
			start, end := byteOffset(text, a.start), byteOffset(text, a.end)
			end = max(start, end)
			c.Range = &conversation.Range{Start: p.base + start, End: p.base + end}
			// Kept for replay only with its place in the text, where it goes
			// back (see outputMessage).
			c.Replay = newPayload(formatURLCitation, versionURLCitation, a.raw)
		}
		out = append(out, llm.Part{Kind: llm.PartCitation, Citation: &c})
	}
	p.notes = nil
	return out
}

// byteOffset is the byte offset in s of its i-th code point, clamped to s.
func byteOffset(s string, i int64) int {
	if i <= 0 {
		return 0
	}
	var n int64
	for off := range s {
		if n == i {
			return off
		}
		n++
	}
	return len(s)
}
