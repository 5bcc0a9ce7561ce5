package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kinds of presentation blocks. Clients ignore kinds they do not know.
const (
	PresentMetrics = "metrics"
	PresentTable   = "table"
	PresentChart   = "chart"
	PresentLinks   = "links"
	PresentActions = "actions"
)

// Chart types.
const (
	ChartBar  = "bar"
	ChartPie  = "pie"
	ChartLine = "line"
)

// PresentBlock is one block of a presentation, as stored in
// [conversation.Presentation.Blocks] (a JSON array of them). The fields
// used depend on Kind:
//
//   - metrics: Items {label, value, display, href?};
//   - table: Columns and Rows;
//   - chart: ChartType and Points {label, value, display, href?};
//   - links: Items {label, template, href};
//   - actions: Items {label, prompt} or {label, template, href}.
//
// Every text is plain text, never markdown or HTML; every href was built
// by the server from a link template of the recipe.
type PresentBlock struct {
	Kind      string          `json:"kind"`
	Title     string          `json:"title,omitempty"`
	Items     []PresentItem   `json:"items,omitempty"`
	Columns   []PresentColumn `json:"columns,omitempty"`
	Rows      []PresentRow    `json:"rows,omitempty"`
	ChartType string          `json:"chart_type,omitempty"`
	Points    []PresentItem   `json:"points,omitempty"`
}

// PresentItem is an entry of a metrics, links or actions block, or a point
// of a chart.
type PresentItem struct {
	Label string `json:"label"`
	// Value is the raw value of a metric or a point: a number or a string.
	Value any `json:"value,omitempty"`
	// Display is Value formatted by the server: "12,345", "80.2%".
	Display string `json:"display,omitempty"`
	// Template names the link template Href was built from.
	Template string `json:"template,omitempty"`
	Href     string `json:"href,omitempty"`
	// Prompt is an action's message, sent as the user's next message.
	Prompt string `json:"prompt,omitempty"`
}

// PresentColumn is a column of a table. Key is stable: "c" and the
// column's index in the model's input ("c0", "c1", ...).
type PresentColumn struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	// Align is left, right or center.
	Align string `json:"align"`
	// PercentOf, on a percent column, is the key of the column whose
	// share of the total each cell is.
	PercentOf string `json:"percent_of,omitempty"`
}

// PresentRow is a row of a table, by column key: Cells holds the raw
// values (a percent column's as a fraction, 0.802), Display how they are
// shown ("80.2%").
type PresentRow struct {
	Cells   map[string]any    `json:"cells"`
	Display map[string]string `json:"display"`
	Href    string            `json:"href,omitempty"`
}

// blockArgs are the arguments of one block; which fields apply depends on
// Kind.
type blockArgs struct {
	Kind        string       `json:"kind"`
	Title       string       `json:"title"`
	Items       []itemArgs   `json:"items"`
	Columns     []columnArgs `json:"columns"`
	Rows        [][]any      `json:"rows"`
	RowLinks    []*linkArgs  `json:"row_links"`
	ChartType   string       `json:"chart_type"`
	Table       *int         `json:"table"`
	LabelColumn *int         `json:"label_column"`
	ValueColumn *int         `json:"value_column"`
}

// itemArgs are the arguments of an entry of a metrics, links or actions
// block.
type itemArgs struct {
	Label    string         `json:"label"`
	Value    any            `json:"value"`
	Template string         `json:"template"`
	Values   map[string]any `json:"values"`
	Prompt   string         `json:"prompt"`
	Link     *linkArgs      `json:"link"`
}

// link returns the item's link: template and values, or link.
func (it *itemArgs) link() *linkArgs {
	if it.Template != "" || it.Values != nil {
		return &linkArgs{Template: it.Template, Values: it.Values}
	}
	return it.Link
}

// linkArgs name a link template and give its values.
type linkArgs struct {
	Template string         `json:"template"`
	Values   map[string]any `json:"values"`
}

// presenter turns the arguments of one call into blocks, collecting what
// it drops or cuts as notes for the model.
type presenter struct {
	links   linkSet
	notes   []string
	clipped int // texts cut to MaxPresentText
}

// note adds a note for the model.
func (p *presenter) note(format string, a ...any) {
	p.notes = append(p.notes, fmt.Sprintf(format, a...))
}

// text returns s cut to MaxPresentText, counting a cut.
func (p *presenter) text(s string) string {
	s, cut := clip(s, MaxPresentText)
	if cut {
		p.clipped++
	}
	return s
}

// label returns s as one line of text, cut to MaxPresentText.
func (p *presenter) label(s string) string { return p.text(oneLine(s)) }

// blocks returns the blocks that survive of raw, in order. Tables come
// first, so that a chart may draw a table after it.
func (p *presenter) blocks(raw []json.RawMessage) []PresentBlock {
	if len(raw) > MaxPresentItems {
		p.note("blocks: %d blocks, showing the first %d", len(raw), MaxPresentItems)
		raw = raw[:MaxPresentItems]
	}
	args := make([]*blockArgs, len(raw))
	for i, r := range raw {
		b, err := decodeBlock(r)
		if err != nil {
			p.note("blocks[%d] dropped: not a valid block (%v)", i, err)
			continue
		}
		args[i] = &b
	}
	tables := make(map[int]*tableInfo)
	out := make([]*PresentBlock, len(raw))
	for i, b := range args {
		if b == nil || b.Kind != PresentTable {
			continue
		}
		at := fmt.Sprintf("blocks[%d]", i)
		t, err := p.table(at, b)
		if err != nil {
			p.note("%s dropped: %v", at, err)
			tables[i] = nil // a table, dropped: a chart of it says so
			continue
		}
		tables[i], out[i] = t, t.block
	}
	for i, b := range args {
		if b == nil || b.Kind == PresentTable {
			continue
		}
		at := fmt.Sprintf("blocks[%d]", i)
		var blk *PresentBlock
		var err error
		switch b.Kind {
		case PresentMetrics:
			blk, err = p.metrics(at, b)
		case PresentLinks:
			blk, err = p.linkList(at, b)
		case PresentActions:
			blk, err = p.actions(at, b)
		case PresentChart:
			blk, err = p.chart(at, i, b, tables)
		default:
			err = fmt.Errorf("unknown kind %q (want metrics, table, chart, links or actions)", b.Kind)
		}
		if err != nil {
			p.note("%s dropped: %v", at, err)
			continue
		}
		out[i] = blk
	}
	var blocks []PresentBlock
	for _, b := range out {
		if b != nil {
			blocks = append(blocks, *b)
		}
	}
	return blocks
}

// entries runs one on each item of b (at most MaxPresentItems), keeping
// the items it returns and noting the ones it drops. It fails when no item
// is left.
func (p *presenter) entries(at string, b *blockArgs, one func(it *itemArgs, at string) (PresentItem, error)) (*PresentBlock, error) {
	if len(b.Items) == 0 {
		return nil, fmt.Errorf("a %s block needs items", b.Kind)
	}
	items := b.Items
	if len(items) > MaxPresentItems {
		p.note("%s: %d items, showing the first %d", at, len(items), MaxPresentItems)
		items = items[:MaxPresentItems]
	}
	blk := &PresentBlock{Kind: b.Kind, Title: p.label(b.Title)}
	for j := range items {
		iat := at + ".items[" + strconv.Itoa(j) + "]"
		it, err := one(&items[j], iat)
		if err != nil {
			p.note("%s dropped: %v", iat, err)
			continue
		}
		blk.Items = append(blk.Items, it)
	}
	switch {
	case len(blk.Items) > 0:
	case len(items) == 1:
		return nil, fmt.Errorf("its only item was dropped")
	default:
		return nil, fmt.Errorf("all its %d items were dropped", len(items))
	}
	return blk, nil
}

// metrics normalises a metrics block: label and value, and an optional
// link. A metric whose link fails is shown without it.
func (p *presenter) metrics(at string, b *blockArgs) (*PresentBlock, error) {
	return p.entries(at, b, func(it *itemArgs, iat string) (PresentItem, error) {
		label := p.label(it.Label)
		if label == "" {
			return PresentItem{}, fmt.Errorf("it has no label")
		}
		out := PresentItem{Label: label}
		switch v := it.Value.(type) {
		case nil:
			return PresentItem{}, fmt.Errorf("it has no value")
		case string:
			if strings.TrimSpace(v) == "" {
				return PresentItem{}, fmt.Errorf("it has no value")
			}
			out.Value = p.text(v)
			out.Display = out.Value.(string)
		case json.Number, bool:
			out.Value, out.Display = v, display(v, FormatNumber)
		default:
			return PresentItem{}, fmt.Errorf("its value must be a number or a string")
		}
		if l := it.link(); l != nil {
			href, err := p.links.href(l)
			if err != nil {
				p.note("%s: shown without its link: %v", iat, err)
			} else {
				out.Template, out.Href = strings.TrimSpace(l.Template), href
			}
		}
		return out, nil
	})
}

// linkList normalises a links block: each entry a label and a link built
// from a template.
func (p *presenter) linkList(at string, b *blockArgs) (*PresentBlock, error) {
	return p.entries(at, b, func(it *itemArgs, _ string) (PresentItem, error) {
		label := p.label(it.Label)
		if label == "" {
			return PresentItem{}, fmt.Errorf("it has no label")
		}
		l := it.link()
		if l == nil {
			return PresentItem{}, fmt.Errorf("it names no link template; %s", p.links.known())
		}
		href, err := p.links.href(l)
		if err != nil {
			return PresentItem{}, err
		}
		return PresentItem{Label: label, Template: strings.TrimSpace(l.Template), Href: href}, nil
	})
}

// actions normalises an actions block: each entry a prompt or a link,
// never both.
func (p *presenter) actions(at string, b *blockArgs) (*PresentBlock, error) {
	return p.entries(at, b, func(it *itemArgs, _ string) (PresentItem, error) {
		label := p.label(it.Label)
		if label == "" {
			return PresentItem{}, fmt.Errorf("it has no label")
		}
		prompt, l := strings.TrimSpace(it.Prompt), it.link()
		switch {
		case prompt != "" && l != nil:
			return PresentItem{}, fmt.Errorf("it has both a prompt and a link; give one: a prompt the user sends, or a link they open")
		case prompt != "":
			return PresentItem{Label: label, Prompt: p.text(prompt)}, nil
		case l == nil:
			return PresentItem{}, fmt.Errorf("it needs a prompt (sent as the user's next message) or a link")
		}
		href, err := p.links.href(l)
		if err != nil {
			return PresentItem{}, err
		}
		return PresentItem{Label: label, Template: strings.TrimSpace(l.Template), Href: href}, nil
	})
}

// indexList writes indices as "3, 5 and 9", naming at most 10.
func indexList(idx []int) string {
	const most = 10
	s := make([]string, 0, min(len(idx), most))
	for _, i := range idx[:min(len(idx), most)] {
		s = append(s, strconv.Itoa(i))
	}
	switch {
	case len(idx) > most:
		return strings.Join(s, ", ") + fmt.Sprintf(" and %d more", len(idx)-most)
	case len(s) == 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// grouped collects indices by message, in the order messages first occur,
// so that one mistake made on 200 rows is one note.
type grouped struct {
	order []string
	idx   map[string][]int
}

func (g *grouped) add(msg string, i int) {
	if g.idx == nil {
		g.idx = make(map[string][]int)
	}
	if _, ok := g.idx[msg]; !ok {
		g.order = append(g.order, msg)
	}
	g.idx[msg] = append(g.idx[msg], i)
}

// each calls f with each message and its indices.
func (g *grouped) each(f func(msg string, idx []int)) {
	for _, m := range slices.Clone(g.order) {
		f(m, g.idx[m])
	}
}
