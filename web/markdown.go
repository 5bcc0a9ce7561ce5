package web

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// newMarkdown returns the console's markdown renderer: CommonMark with the
// GFM extensions (tables, strikethrough, autolinks, task lists). Raw HTML is
// left out (goldmark's default; html.WithUnsafe stays off) and linkFilter
// drops the links and images whose destination is not safe.
func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkFilter{}, 1000))),
	)
}

// render renders markdown as HTML safe to insert in the console's page.
func render(md goldmark.Markdown, src []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := md.Convert(src, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// linkFilter replaces every link, autolink and image whose destination
// safeURL refuses with its text, and marks the links it keeps so that the
// browser sends no referrer and gives the target no handle on the console.
type linkFilter struct{}

var _ parser.ASTTransformer = linkFilter{}

func (linkFilter) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var refused []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			if !safeURL(string(l.Destination)) {
				refused = append(refused, n)
				return ast.WalkSkipChildren, nil
			}
			l.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
		case *ast.AutoLink:
			if !safeURL(string(l.URL(src))) {
				refused = append(refused, n)
				return ast.WalkSkipChildren, nil
			}
			l.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
		case *ast.Image:
			if !safeURL(string(l.Destination)) {
				refused = append(refused, n)
				return ast.WalkSkipChildren, nil
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range refused {
		unlink(n, src)
	}
}

// unlink replaces a link or image node by its text: its children for a
// link or image, its label for an autolink.
func unlink(n ast.Node, src []byte) {
	parent := n.Parent()
	if parent == nil {
		return
	}
	if a, ok := n.(*ast.AutoLink); ok {
		parent.ReplaceChild(parent, n, ast.NewString(a.Label(src)))
		return
	}
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c) // moves c out of n
		c = next
	}
	parent.RemoveChild(parent, n)
}

// safeURL reports whether a link may point at u: an absolute http(s) URL
// with a host, or a path of this server ("/app/media?filter=..."). Anything
// else (javascript:, data:, mailto:, "//host", a bare "name") is refused.
func safeURL(u string) bool {
	if u == "" || strings.ContainsAny(u, "\\\x00\t\r\n") {
		return false
	}
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch p.Scheme {
	case "http", "https":
		return p.Host != ""
	case "":
		return strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") && p.Host == ""
	}
	return false
}
