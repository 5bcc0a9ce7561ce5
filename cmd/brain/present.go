package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/tools"
)

// writePresentation prints a presentation for a terminal: the summary,
// metrics as a list, tables with aligned columns, charts as their points,
// links and actions. Blocks it cannot read fall back to the server-built
// markdown.
func writePresentation(w io.Writer, p *conversation.Presentation) {
	var blocks []tools.PresentBlock
	if len(p.Blocks) == 0 || json.Unmarshal(p.Blocks, &blocks) != nil {
		writeSpeech(w, "assistant", p.Markdown)
		return
	}
	var b strings.Builder
	b.WriteString(p.Summary)
	for _, blk := range blocks {
		b.WriteString("\n")
		if blk.Title != "" {
			b.WriteString("\n" + blk.Title + ":")
		}
		switch blk.Kind {
		case "table":
			b.WriteString("\n" + table(blk))
		case "metrics", "links", "actions", "chart":
			items := blk.Items
			if blk.Kind == "chart" {
				items = blk.Points
			}
			for _, it := range items {
				b.WriteString("\n- " + item(it))
			}
		}
	}
	writeSpeech(w, "assistant", b.String())
}

// item is one line of a list block.
func item(it tools.PresentItem) string {
	switch {
	case it.Display != "":
		return it.Label + ": " + it.Display
	case it.Href != "":
		return it.Label + " (" + it.Href + ")"
	case it.Prompt != "":
		return it.Label + ` → says "` + it.Prompt + `"`
	}
	if it.Value != nil {
		return fmt.Sprintf("%s: %v", it.Label, it.Value)
	}
	return it.Label
}

// table lays a table block out in columns padded to their widest cell,
// numbers aligned right as the server says.
func table(blk tools.PresentBlock) string {
	cells := [][]string{make([]string, len(blk.Columns))}
	for i, c := range blk.Columns {
		cells[0][i] = c.Label
	}
	for _, r := range blk.Rows {
		row := make([]string, len(blk.Columns))
		for i, c := range blk.Columns {
			row[i] = r.Display[c.Key]
		}
		cells = append(cells, row)
	}
	width := make([]int, len(blk.Columns))
	for _, row := range cells {
		for i, s := range row {
			width[i] = max(width[i], utf8.RuneCountInString(s))
		}
	}
	var lines []string
	for n, row := range cells {
		parts := make([]string, len(row))
		for i, s := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
			if blk.Columns[i].Align == "right" {
				parts[i] = pad + s
			} else {
				parts[i] = s + pad
			}
		}
		lines = append(lines, strings.TrimRight(strings.Join(parts, "  "), " "))
		if n == 0 {
			rule := make([]string, len(width))
			for i, wd := range width {
				rule[i] = strings.Repeat("─", wd)
			}
			lines = append(lines, strings.Join(rule, "  "))
		}
	}
	return strings.Join(lines, "\n")
}
