package tools

import (
	"regexp"
	"strings"
)

// presentMarkdown returns the GFM fallback of a presentation, for clients
// that do not render blocks: the summary as a paragraph, metrics, links and
// actions as bullet lists, a table as a GFM table, a chart as a list of its
// points. Parts are separated by a blank line; lists one after another
// alternate their markers ("-", "*") so that they stay apart. Every text
// the model wrote is escaped (see mdText): it shows as text, never as
// markup, HTML or a link. The only links are the hrefs the server built.
func presentMarkdown(summary string, blocks []PresentBlock) string {
	parts := []string{mdLine(summary)}
	bullet, list := "- ", false
	for i := range blocks {
		b := &blocks[i]
		isList := b.Kind != PresentTable
		if isList && list {
			// A blank line does not end a list: the next list would join
			// it, unless it uses another marker.
			if bullet == "- " {
				bullet = "* "
			} else {
				bullet = "- "
			}
		}
		list = isList
		var sb strings.Builder
		switch {
		case b.Kind == PresentChart && b.Title != "":
			sb.WriteString("**" + mdText(b.Title) + "** (" + b.ChartType + " chart)\n\n")
		case b.Kind == PresentChart:
			sb.WriteString("**" + strings.ToUpper(b.ChartType[:1]) + b.ChartType[1:] + " chart**\n\n")
		case b.Title != "":
			sb.WriteString("**" + mdText(b.Title) + "**\n\n")
		}
		switch b.Kind {
		case PresentMetrics:
			for _, it := range b.Items {
				sb.WriteString(bullet + mdLink(mdLine(it.Label), it.Href) + ": " + mdText(it.Display) + "\n")
			}
		case PresentTable:
			mdTable(&sb, b)
		case PresentChart:
			for _, pt := range b.Points {
				sb.WriteString(bullet + mdLink(mdLine(pt.Label), pt.Href) + ": " + mdText(pt.Display) + "\n")
			}
		case PresentLinks:
			for _, it := range b.Items {
				sb.WriteString(bullet + mdLink(mdText(it.Label), it.Href) + "\n")
			}
		case PresentActions:
			for _, it := range b.Items {
				switch {
				case it.Href != "":
					sb.WriteString(bullet + mdLink(mdText(it.Label), it.Href) + "\n")
				case oneLine(it.Prompt) == it.Label:
					sb.WriteString(bullet + mdLine(it.Label) + "\n")
				default:
					sb.WriteString(bullet + mdLine(it.Label) + " (reply: \"" + mdText(it.Prompt) + "\")\n")
				}
			}
		}
		parts = append(parts, strings.TrimSuffix(sb.String(), "\n"))
	}
	return strings.Join(parts, "\n\n") + "\n"
}

// mdTable writes table b as a GFM table. A row's link goes on its first
// cell.
func mdTable(sb *strings.Builder, b *PresentBlock) {
	sb.WriteString("|")
	for _, c := range b.Columns {
		sb.WriteString(" " + mdText(c.Label) + " |")
	}
	sb.WriteString("\n|")
	for _, c := range b.Columns {
		switch c.Align {
		case "right":
			sb.WriteString(" ---: |")
		case "center":
			sb.WriteString(" :---: |")
		default:
			sb.WriteString(" :--- |")
		}
	}
	sb.WriteString("\n")
	for _, r := range b.Rows {
		sb.WriteString("|")
		for i, c := range b.Columns {
			cell := mdText(r.Display[c.Key])
			if i == 0 && cell != "" {
				cell = mdLink(cell, r.Href)
			}
			sb.WriteString(" " + cell + " |")
		}
		sb.WriteString("\n")
	}
}

// mdEscaper escapes what would make text markup in GFM: emphasis, code,
// links and images, table cells, strikethrough, HTML and entities, and the
// email autolinks of GFM's autolink extension.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`|`, `\|`, `~`, `\~`, `@`, `\@`,
	`<`, `&lt;`, `>`, `&gt;`, `&`, `&amp;`,
	"://", `:\/\/`, // URL autolinks
)

// wwwPattern finds the start of a www. autolink.
var wwwPattern = regexp.MustCompile(`(?i)www\.`)

// mdText returns s as one line of markdown that shows s as it is: never
// markup, HTML or a link. It is safe inside a table cell, link text and
// emphasis.
func mdText(s string) string {
	s = mdEscaper.Replace(oneLine(s))
	return wwwPattern.ReplaceAllStringFunc(s, func(m string) string { return m[:3] + `\.` })
}

// mdLine is mdText for text that starts a line or a list item, where "#",
// "-", "+", "=" and "1." would start a heading, a list or a rule.
func mdLine(s string) string {
	s = mdText(s)
	if s == "" {
		return s
	}
	switch s[0] {
	case '#', '-', '+', '=':
		return `\` + s
	}
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	if digits > 0 && digits < len(s) && (s[digits] == '.' || s[digits] == ')') {
		return s[:digits] + `\` + s[digits:]
	}
	return s
}

// mdHref percent-encodes what would end a markdown link destination early.
var mdHref = strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E", `\`, "%5C")

// mdLink returns text linked to href, or text alone when href is "".
func mdLink(text, href string) string {
	if href == "" || text == "" {
		return text
	}
	return "[" + text + "](" + mdHref.Replace(href) + ")"
}
