package tools

import (
	"encoding/json"
	"testing"
)

func TestMarkdownEscaping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, text, line string
	}{
		{"plain words", "plain words", "plain words"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"a|b", `a\|b`, `a\|b`},
		{"two\nlines\r\nand\ttab", "two lines and tab", "two lines and tab"},
		{"**bold** _it_ `code` ~~del~~", `\*\*bold\*\* \_it\_ \` + "`code\\`" + ` \~\~del\~\~`, `\*\*bold\*\* \_it\_ \` + "`code\\`" + ` \~\~del\~\~`},
		{"[x](javascript:alert(1))", `\[x\](javascript:alert(1))`, `\[x\](javascript:alert(1))`},
		{"&amp; &copy;", "&amp;amp; &amp;copy;", "&amp;amp; &amp;copy;"},
		{`back\slash`, `back\\slash`, `back\\slash`},
		{"see https://evil.example or WWW.evil.example", `see https:\/\/evil.example or WWW\.evil.example`, `see https:\/\/evil.example or WWW\.evil.example`},
		{"mail x@evil.example", `mail x\@evil.example`, `mail x\@evil.example`},
		{"# not a heading", "# not a heading", `\# not a heading`},
		{"- not a list", "- not a list", `\- not a list`},
		{"+ not a list", "+ not a list", `\+ not a list`},
		{"=== not a rule", "=== not a rule", `\=== not a rule`},
		{"12. not a list", "12. not a list", `12\. not a list`},
		{"3) not a list", "3) not a list", `3\) not a list`},
		{"2026 was a year", "2026 was a year", "2026 was a year"},
		{"> not a quote", "&gt; not a quote", "&gt; not a quote"},
		{"    not code", "not code", "not code"},
	}
	for _, tt := range tests {
		if got := mdText(tt.in); got != tt.text {
			t.Errorf("mdText(%q) = %q, want %q", tt.in, got, tt.text)
		}
		if got := mdLine(tt.in); got != tt.line {
			t.Errorf("mdLine(%q) = %q, want %q", tt.in, got, tt.line)
		}
	}
}

func TestMarkdownLink(t *testing.T) {
	t.Parallel()
	if got, want := mdLink("Go", "https://en.wikipedia.org/wiki/Go_(language) x"), "[Go](https://en.wikipedia.org/wiki/Go_%28language%29%20x)"; got != want {
		t.Errorf("mdLink = %q, want %q", got, want)
	}
	if got := mdLink("Go", ""); got != "Go" {
		t.Errorf("mdLink without href = %q", got)
	}
}

// TestMarkdownListsApart checks that lists one after another stay apart: a
// blank line alone would join them.
func TestMarkdownListsApart(t *testing.T) {
	t.Parallel()
	blocks := []PresentBlock{
		{Kind: PresentLinks, Items: []PresentItem{{Label: "a", Href: "/a"}}},
		{Kind: PresentActions, Items: []PresentItem{{Label: "Say b", Prompt: "Say b"}}},
		{Kind: PresentMetrics, Items: []PresentItem{{Label: "c", Value: json.Number("1"), Display: "1"}}},
		{Kind: PresentTable, Columns: []PresentColumn{{Key: "c0", Label: "x", Align: "center"}}, Rows: []PresentRow{{Display: map[string]string{"c0": ""}, Href: "/r"}}},
		{Kind: PresentChart, ChartType: ChartLine, Points: []PresentItem{{Label: "d", Display: "2"}}},
	}
	want := "s\n\n- [a](/a)\n\n* Say b\n\n- c: 1\n\n| x |\n| :---: |\n|  |\n\n**Line chart**\n\n- d: 2\n"
	if got := presentMarkdown("s", blocks); got != want {
		t.Errorf("markdown\n got: %q\nwant: %q", got, want)
	}
}
