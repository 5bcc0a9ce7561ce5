package tools

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// columnArgs are the arguments of a table column.
type columnArgs struct {
	Label     string `json:"label"`
	Align     string `json:"align"`
	Format    string `json:"format"`
	PercentOf *int   `json:"percent_of"`
}

// tableInfo is a table that survived, for the charts drawn from it.
type tableInfo struct {
	block *PresentBlock
	// keys and numeric are by the column's index in the input: the key of
	// a column shown ("" for one dropped), and whether it holds numbers.
	keys    []string
	numeric []bool
	percent []bool
	formats []string
}

// columnKey is the stable key of input column i.
func columnKey(i int) string { return "c" + strconv.Itoa(i) }

// table normalises a table block: columns, rows of raw scalars with their
// display strings, computed percent columns and row links. It fails when
// no column or no row is left; a bad row, a bad percent column or a bad
// row link is dropped with a note.
func (p *presenter) table(at string, b *blockArgs) (*tableInfo, error) {
	cols := b.Columns
	if len(cols) == 0 {
		return nil, fmt.Errorf("a table needs columns")
	}
	nData := 0
	for _, c := range cols {
		if c.PercentOf == nil {
			nData++
		}
	}

	// Rows: one cell per column, or one per column that is not a percent
	// column.
	var bad grouped
	var rows [][]any // of len(cols) cells
	var from []int   // the input index of each row
	for i, r := range b.Rows {
		cells, msg := rowCells(r, cols, nData)
		if msg != "" {
			bad.add(msg, i)
			continue
		}
		rows, from = append(rows, cells), append(from, i)
	}
	bad.each(func(msg string, idx []int) {
		p.note("%s: dropped %s %s: %s", at, plural(len(idx), "row"), indexList(idx), msg)
	})
	if len(rows) == 0 {
		if len(b.Rows) == 0 {
			return nil, fmt.Errorf("a table needs rows")
		}
		if len(b.Rows) == 1 {
			return nil, fmt.Errorf("its only row was dropped")
		}
		return nil, fmt.Errorf("all its %d rows were dropped", len(b.Rows))
	}

	info := &tableInfo{
		keys:    make([]string, len(cols)),
		numeric: make([]bool, len(cols)),
		percent: make([]bool, len(cols)),
		formats: make([]string, len(cols)),
	}
	for i, c := range cols {
		info.numeric[i] = numericColumn(rows, i)
		info.formats[i] = FormatNumber
		if c.Format == FormatPlain {
			info.formats[i] = FormatPlain
		}
	}
	// Percent columns, from the raw numbers of every valid row.
	for i, c := range cols {
		if c.PercentOf == nil {
			continue
		}
		if err := percentColumn(rows, cols, i, info.numeric); err != nil {
			p.note("%s.columns[%d] dropped: %v", at, i, err)
			continue
		}
		info.percent[i], info.numeric[i] = true, true
	}

	shown := min(len(cols), MaxPresentColumns)
	if len(cols) > shown {
		p.note("%s: %d columns, showing the first %d", at, len(cols), shown)
	}
	if len(rows) > MaxPresentRows {
		p.note("%s: %d rows, showing the first %d", at, len(rows), MaxPresentRows)
		rows, from = rows[:MaxPresentRows], from[:MaxPresentRows]
	}

	blk := &PresentBlock{Kind: PresentTable, Title: p.label(b.Title)}
	for i := range shown {
		c := cols[i]
		if c.PercentOf != nil && !info.percent[i] {
			continue
		}
		col := PresentColumn{Key: columnKey(i), Label: p.label(c.Label), Align: c.Align}
		if info.percent[i] {
			col.PercentOf = columnKey(*c.PercentOf)
		}
		if col.Align != "left" && col.Align != "right" && col.Align != "center" {
			col.Align = "left"
			if info.numeric[i] {
				col.Align = "right"
			}
		}
		info.keys[i] = col.Key
		blk.Columns = append(blk.Columns, col)
	}
	if len(blk.Columns) == 0 {
		return nil, fmt.Errorf("none of its columns is left")
	}
	for _, r := range rows {
		row := PresentRow{Cells: make(map[string]any, len(blk.Columns)), Display: make(map[string]string, len(blk.Columns))}
		for i, key := range info.keys {
			if key == "" {
				continue
			}
			switch v := r[i].(type) {
			case percentCell:
				if v.none {
					row.Cells[key], row.Display[key] = nil, ""
				} else {
					row.Cells[key], row.Display[key] = v.value, v.display
				}
			case string:
				s := p.text(v)
				row.Cells[key], row.Display[key] = s, s
			default:
				row.Cells[key], row.Display[key] = v, display(v, info.formats[i])
			}
		}
		blk.Rows = append(blk.Rows, row)
	}
	p.rowLinks(at, b.RowLinks, len(b.Rows), blk.Rows, from)
	info.block = blk
	return info, nil
}

// rowCells returns the cells of input row r by column, or why r is not a
// row of cols.
func rowCells(r []any, cols []columnArgs, nData int) ([]any, string) {
	for _, v := range r {
		switch v.(type) {
		case nil, string, json.Number, bool:
		default:
			return nil, "a cell must be a string, a number, a boolean or null"
		}
	}
	switch len(r) {
	case len(cols):
		return r, ""
	case nData:
		cells := make([]any, len(cols))
		k := 0
		for i, c := range cols {
			if c.PercentOf == nil {
				cells[i] = r[k]
				k++
			}
		}
		return cells, ""
	}
	if nData == len(cols) {
		return nil, fmt.Sprintf("want %d cells, one per column", len(cols))
	}
	return nil, fmt.Sprintf("want %d cells, one per column (or %d, leaving out the percent columns)", len(cols), nData)
}

// numericColumn reports whether column i holds numbers: at least one, and
// nothing else but nulls.
func numericColumn(rows [][]any, i int) bool {
	seen := false
	for _, r := range rows {
		switch r[i].(type) {
		case nil:
		case json.Number:
			seen = true
		default:
			return false
		}
	}
	return seen
}

// percentCell is a computed cell of a percent column.
type percentCell struct {
	value   float64
	display string
	none    bool // the source cell is null
}

// percentColumn computes percent column i in rows: each row's share of the
// total of its source column. It fails, leaving rows as they are, when the
// source is not a numeric column of the table.
func percentColumn(rows [][]any, cols []columnArgs, i int, isNumeric []bool) error {
	src := *cols[i].PercentOf
	switch {
	case src < 0 || src >= len(cols):
		return fmt.Errorf("percent_of is %d, but the table has %s (indices from 0)", src, count(len(cols), "column"))
	case src == i:
		return fmt.Errorf("percent_of names the column itself; name the numeric column whose share it shows")
	case cols[src].PercentOf != nil:
		return fmt.Errorf("percent_of names column %d, another percent column; name a column of raw numbers", src)
	case !isNumeric[src]:
		return fmt.Errorf("percent_of names column %d, which does not hold numbers only", src)
	}
	total := 0.0
	for _, r := range rows {
		if f, ok := numeric(r[src]); ok {
			total += f
		}
	}
	for _, r := range rows {
		f, ok := numeric(r[src])
		if !ok {
			r[i] = percentCell{none: true}
			continue
		}
		v, d := share(f, total)
		r[i] = percentCell{value: v, display: d}
	}
	return nil
}

// rowLinks sets the href of the rows from row_links, by input row index.
func (p *presenter) rowLinks(at string, links []*linkArgs, nIn int, rows []PresentRow, from []int) {
	if len(links) == 0 {
		return
	}
	if len(links) > nIn {
		p.note("%s: row_links has %d entries for %s; the extra ones are ignored", at, len(links), count(nIn, "row"))
	}
	var bad grouped
	for k, i := range from {
		if i >= len(links) || links[i] == nil {
			continue
		}
		href, err := p.links.href(links[i])
		if err != nil {
			bad.add(err.Error(), i)
			continue
		}
		rows[k].Href = href
	}
	bad.each(func(msg string, idx []int) {
		p.note("%s.row_links: %s %s without a link: %s", at, plural(len(idx), "row"), indexList(idx), msg)
	})
}

// chart normalises a chart block: points drawn from two columns of a
// table block.
func (p *presenter) chart(at string, i int, b *blockArgs, tables map[int]*tableInfo) (*PresentBlock, error) {
	kind := strings.TrimSpace(b.ChartType)
	switch kind {
	case "":
		kind = ChartBar
	case ChartBar, ChartPie, ChartLine:
	default:
		return nil, fmt.Errorf("chart_type %q is not bar, pie or line", b.ChartType)
	}
	ti := -1
	if b.Table != nil {
		ti = *b.Table
		t, ok := tables[ti]
		switch {
		case !ok:
			return nil, fmt.Errorf("table is %d, but blocks[%d] is not a table", ti, ti)
		case t == nil:
			return nil, fmt.Errorf("its table, blocks[%d], was dropped", ti)
		}
	} else {
		for j := i - 1; j >= 0; j-- {
			if _, ok := tables[j]; ok {
				ti = j
				break
			}
		}
		if ti < 0 {
			return nil, fmt.Errorf("no table comes before it; give the index in blocks of the table to draw as \"table\"")
		}
		if tables[ti] == nil {
			return nil, fmt.Errorf("its table, blocks[%d], was dropped", ti)
		}
	}
	t := tables[ti]
	shown := func(c int) bool { return c >= 0 && c < len(t.keys) && t.keys[c] != "" }
	label := 0
	if b.LabelColumn != nil {
		label = *b.LabelColumn
	}
	if !shown(label) {
		return nil, fmt.Errorf("label_column %d is not a column of the table blocks[%d]", label, ti)
	}
	value := -1
	if b.ValueColumn != nil {
		value = *b.ValueColumn
		switch {
		case !shown(value):
			return nil, fmt.Errorf("value_column %d is not a column of the table blocks[%d]", value, ti)
		case !t.numeric[value]:
			return nil, fmt.Errorf("value_column %d does not hold numbers", value)
		}
	} else {
		for c := range t.keys {
			if c != label && shown(c) && t.numeric[c] {
				value = c
				break
			}
		}
		if value < 0 {
			return nil, fmt.Errorf("the table blocks[%d] has no numeric column to draw", ti)
		}
	}

	lk, vk := t.keys[label], t.keys[value]
	blk := &PresentBlock{Kind: PresentChart, Title: p.label(b.Title), ChartType: kind}
	empty := 0
	for _, r := range t.block.Rows {
		v := r.Cells[vk]
		f, ok := numeric(v)
		if !ok {
			empty++
			continue
		}
		if kind == ChartPie && f < 0 {
			return nil, fmt.Errorf("a pie chart needs values of zero or more (column %d has %s)", value, r.Display[vk])
		}
		blk.Points = append(blk.Points, PresentItem{Label: oneLine(r.Display[lk]), Value: v, Display: r.Display[vk], Href: r.Href})
	}
	if len(blk.Points) == 0 {
		return nil, fmt.Errorf("no row has a value in column %d", value)
	}
	if empty > 0 {
		p.note("%s: %s without a value in column %d left out", at, count(empty, "row"), value)
	}
	if n := len(blk.Points); n > MaxPresentPoints {
		if kind == ChartPie {
			other := 0.0
			for _, pt := range blk.Points[MaxPresentPoints-1:] {
				f, _ := numeric(pt.Value)
				other += f
			}
			d := display(other, t.formats[value])
			if t.percent[value] {
				d = strconv.FormatFloat(other*100, 'f', 1, 64) + "%"
			}
			blk.Points = append(blk.Points[:MaxPresentPoints-1], PresentItem{Label: "Other", Value: other, Display: d})
			p.note("%s: %d slices; a chart holds %d, so the last %d are summed as \"Other\"", at, n, MaxPresentPoints, n-MaxPresentPoints+1)
		} else {
			blk.Points = blk.Points[:MaxPresentPoints]
			p.note("%s: %d points, showing the first %d (the table shows every row)", at, n, MaxPresentPoints)
		}
	}
	return blk, nil
}

// plural returns "row" or "rows" for n.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
