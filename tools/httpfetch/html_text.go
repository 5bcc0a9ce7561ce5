package httpfetch

import (
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// isHTML reports whether media type mt is an HTML page, which http_fetch
// returns as its text rather than its markup.
func isHTML(mt string) bool {
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// skipped are the elements whose content is not text a reader sees.
var skipped = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Noscript: true,
	atom.Template: true, atom.Svg: true, atom.Math: true, atom.Iframe: true,
	atom.Object: true, atom.Select: true,
}

// blocks are the elements that start and end a line of their own.
var blocks = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true,
	atom.Body: true, atom.Caption: true, atom.Dd: true, atom.Details: true,
	atom.Div: true, atom.Dl: true, atom.Dt: true, atom.Fieldset: true,
	atom.Figcaption: true, atom.Figure: true, atom.Footer: true, atom.Form: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
	atom.H6: true, atom.Header: true, atom.Hr: true, atom.Html: true,
	atom.Li: true, atom.Main: true, atom.Nav: true, atom.Ol: true, atom.P: true,
	atom.Pre: true, atom.Section: true, atom.Summary: true, atom.Table: true,
	atom.Tbody: true, atom.Tfoot: true, atom.Thead: true, atom.Tr: true, atom.Ul: true,
}

// htmlText returns the readable text of the HTML page src fetched from
// base: its title as the first line, a blank line, then the text of its
// body, one line per block element, list items prefixed "- " (indented
// two spaces a level of nesting), table cells separated by " | " and each
// http(s) link's text followed by its absolute URL in parentheses.
// Scripts, styles and other content a reader does not see are dropped.
// Malformed markup is read as a browser would read it.
func htmlText(src string, base *url.URL) string {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil { // only a failing reader, which a strings.Reader is not
		return src
	}
	w := &textWriter{base: base}
	title := w.head(doc)
	w.node(doc)
	w.flush()
	body := strings.Join(w.lines, "\n")
	switch {
	case title == "":
		return body
	case body == "":
		return title
	}
	return title + "\n\n" + body
}

// textWriter gathers the lines of a page's text.
type textWriter struct {
	base  *url.URL
	lines []string
	line  strings.Builder
	// prefix starts the line once it has text ("- " of a list item).
	prefix string
	// space is whether a space separates the next word from the line.
	space bool
	lists int // depth of ul and ol elements
	pre   int // depth of pre elements
}

// head returns the page's title, whitespace collapsed, and takes the
// first <base href> as the base of relative links.
func (w *textWriter) head(doc *html.Node) string {
	var title string
	baseSeen := false
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch {
		case n.DataAtom == atom.Title && n.Namespace == "" && title == "": // not an svg <title>
			var b strings.Builder
			for c := range n.Descendants() {
				if c.Type == html.TextNode {
					b.WriteString(c.Data)
				}
			}
			title = strings.Join(strings.Fields(b.String()), " ")
		case n.DataAtom == atom.Base && !baseSeen:
			if href, ok := attr(n, "href"); ok {
				baseSeen = true
				if u, err := w.base.Parse(strings.TrimSpace(href)); err == nil {
					w.base = u
				}
			}
		}
	}
	return title
}

// node writes the text of n and its descendants.
func (w *textWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.DocumentNode:
		w.children(n)
		return
	case html.ElementNode:
	default: // comments, doctypes
		return
	}
	a := n.DataAtom
	if skipped[a] {
		return
	}
	switch a {
	case atom.Br:
		w.flush()
		return
	case atom.Td, atom.Th:
		if w.line.Len() > 0 {
			w.line.WriteString(" |")
			w.space = true
		}
		w.children(n)
		w.space = true
		return
	case atom.A:
		w.children(n)
		w.link(n)
		return
	}
	if !blocks[a] {
		w.children(n)
		return
	}
	w.flush()
	switch a {
	case atom.Ul, atom.Ol:
		w.lists++
		defer func() { w.lists-- }()
	case atom.Li:
		w.prefix = strings.Repeat("  ", max(w.lists-1, 0)) + "- "
	case atom.Pre:
		w.pre++
		defer func() { w.pre-- }()
	}
	w.children(n)
	w.flush()
	if a == atom.Li {
		w.prefix = "" // an item with no text
	}
}

func (w *textWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

// text writes a text node: words separated by single spaces, or, inside
// pre, as it is, line by line.
func (w *textWriter) text(s string) {
	if w.pre > 0 {
		for i, l := range strings.Split(s, "\n") {
			if i > 0 {
				w.flush()
			}
			if l != "" {
				w.start()
				w.line.WriteString(l)
			}
		}
		return
	}
	lead := strings.TrimLeftFunc(s, unicode.IsSpace) != s
	for i, f := range strings.Fields(s) {
		if i > 0 || lead {
			w.space = true
		}
		w.word(f)
	}
	if strings.TrimRightFunc(s, unicode.IsSpace) != s {
		w.space = true
	}
}

// word writes f to the line, after a space if one is due.
func (w *textWriter) word(f string) {
	if w.line.Len() == 0 {
		w.start()
	} else if w.space {
		w.line.WriteByte(' ')
	}
	w.line.WriteString(f)
	w.space = false
}

// start begins the line with its prefix, if it has not begun.
func (w *textWriter) start() {
	if w.line.Len() == 0 {
		w.line.WriteString(w.prefix)
		w.prefix = ""
	}
}

// link writes the absolute URL of link n after its text, when it is an
// http or https URL that is not just a place in this page.
func (w *textWriter) link(n *html.Node) {
	href, ok := attr(n, "href")
	href = strings.TrimSpace(href)
	if !ok || href == "" || strings.HasPrefix(href, "#") {
		return
	}
	u, err := w.base.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return
	}
	if s := u.String(); !strings.HasSuffix(w.line.String(), s) {
		after := w.space // "text (url)." as much as "text (url) next"
		w.space = true
		w.word("(" + s + ")")
		w.space = after
	}
}

// flush ends the line, if it has text; a line of spaces is dropped.
func (w *textWriter) flush() {
	if l := strings.TrimRight(w.line.String(), " \t\r"); strings.TrimSpace(l) != "" {
		w.lines = append(w.lines, l)
	}
	w.line.Reset()
	w.space = false
}

// attr returns the value of n's attribute key, if it has one.
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}
