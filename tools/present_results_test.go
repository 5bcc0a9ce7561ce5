package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/conversation"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testLinks are the link templates of the present_results tests.
var testLinks = map[string]string{
	"media":  "/app/media?filter={filter}",
	"record": "/app/media/{id}",
}

// presentTool returns present_results with testLinks.
func presentTool(t testing.TB) Tool {
	t.Helper()
	tool, err := PresentResultsTool(PresentResultsConfig{Links: testLinks})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// present calls present_results through a registry, as the engine does,
// and returns the result and its blocks.
func present(t *testing.T, args string) (Result, []PresentBlock) {
	t.Helper()
	res := mustRegistry(t, presentTool(t)).Call(context.Background(), call(PresentResults, args))
	if res.IsError {
		t.Fatalf("IsError: %s", res.Text())
	}
	if res.Presentation == nil {
		t.Fatal("no presentation")
	}
	var blocks []PresentBlock
	if len(res.Presentation.Blocks) > 0 {
		if err := json.Unmarshal(res.Presentation.Blocks, &blocks); err != nil {
			t.Fatal(err)
		}
	}
	return res, blocks
}

// presentGolden is what a golden file under testdata/present/ holds.
type presentGolden struct {
	Model    string `yaml:"model"`
	Summary  string `yaml:"summary"`
	Blocks   any    `yaml:"blocks"`
	Markdown string `yaml:"markdown"`
}

// TestPresentResultsGolden plays each testdata/present/*.json as the
// arguments of a call and compares the result with the .golden.yaml
// beside it (`go test ./tools -update` rewrites them).
func TestPresentResultsGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/present/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 7 {
		t.Fatalf("found %d cases under testdata/present/, want the contract's example and the negative cases", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, _ := present(t, string(args))
			g := presentGolden{Model: res.Text(), Summary: res.Presentation.Summary, Markdown: res.Presentation.Markdown}
			if len(res.Presentation.Blocks) > 0 {
				g.Blocks = jsonValue(t, string(res.Presentation.Blocks))
			}
			var buf bytes.Buffer
			enc := yaml.NewEncoder(&buf)
			enc.SetIndent(2)
			if err := enc.Encode(g); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(f, ".json") + ".golden.yaml"
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run `go test ./tools -update` to create it)", err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("%s differs (-want +got); run `go test ./tools -update` if the change is intended:\n%s", golden, diff)
			}
		})
	}
}

// TestPresentResultsContractExample checks the owner's example beyond its
// golden file: the figures a person reads, and what the model reads.
func TestPresentResultsContractExample(t *testing.T) {
	t.Parallel()
	args, err := os.ReadFile("testdata/present/contract_example.json")
	if err != nil {
		t.Fatal(err)
	}
	res, blocks := present(t, string(args))
	kinds := make([]string, len(blocks))
	for i, b := range blocks {
		kinds[i] = b.Kind
	}
	if diff := cmp.Diff([]string{PresentMetrics, PresentTable, PresentChart, PresentLinks, PresentActions}, kinds); diff != "" {
		t.Fatalf("block kinds (-want +got):\n%s", diff)
	}
	table := blocks[1]
	var shares []string
	for _, r := range table.Rows {
		shares = append(shares, r.Display["c2"])
	}
	if diff := cmp.Diff([]string{"80.2%", "19.8%"}, shares); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}
	if got := table.Rows[0].Cells["c2"]; got != 0.802 {
		t.Errorf("raw share = %v, want 0.802", got)
	}
	pie := blocks[2]
	if pie.ChartType != ChartPie || len(pie.Points) != 2 {
		t.Errorf("chart = %s with %d points, want a pie of 2", pie.ChartType, len(pie.Points))
	}
	var hrefs []string
	for _, it := range blocks[3].Items {
		hrefs = append(hrefs, it.Href)
	}
	if diff := cmp.Diff([]string{"/app/media?filter=type%3Ajpeg", "/app/media?filter=type%3Apng"}, hrefs); diff != "" {
		t.Errorf("filter links (-want +got):\n%s", diff)
	}
	// The model reads what was shown, addressed to it alone, and is told
	// not to repeat it.
	want := []conversation.Block{conversation.TextBlock("Shown to the user: the summary, metrics (2), " +
		`a table "Media by type" (2 rows, 3 columns), a pie chart "Share by type" (2 points), links (2), actions (2). ` +
		"They see it in full: do not repeat its data in respond; answer in a sentence or two.").For(conversation.RoleAssistant)}
	if diff := cmp.Diff(want, res.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	// Every line of the table is a line of its own.
	if !strings.Contains(res.Presentation.Markdown, "\n| Type | Count | Share |\n| :--- | ---: | ---: |\n") {
		t.Errorf("markdown has no multi-line GFM table:\n%s", res.Presentation.Markdown)
	}
}

// TestPresentResultsDrops checks that an invalid entry is dropped with a
// note for the model while the rest is shown.
func TestPresentResultsDrops(t *testing.T) {
	t.Parallel()
	table := `{"kind": "table", "columns": [{"label": "Type"}, {"label": "Count"}], "rows": [["a", 3], ["b", 1]]}`
	tests := []struct {
		name   string
		blocks string // the blocks array's entries
		kinds  []string
		notes  []string
	}{
		{
			name:   "unknown link template",
			blocks: `{"kind": "links", "items": [{"label": "ok", "template": "media", "values": {"filter": "x"}}, {"label": "bad", "template": "nope"}]}`,
			kinds:  []string{PresentLinks},
			notes:  []string{`blocks[0].items[1] dropped: unknown link template "nope"; known: media {filter}; record {id}`},
		},
		{
			name:   "missing value",
			blocks: `{"kind": "links", "items": [{"label": "bad", "template": "media", "values": {}}]}`,
			notes:  []string{`blocks[0] dropped: its only item was dropped`, `blocks[0].items[0] dropped: link template "media" needs a value for {filter}`},
		},
		{
			name:   "value for no placeholder",
			blocks: `{"kind": "links", "items": [{"label": "bad", "template": "media", "values": {"filter": "x", "sort": "name"}}]}`,
			notes: []string{
				"blocks[0] dropped: its only item was dropped",
				`blocks[0].items[0] dropped: link template "media" has no placeholder sort (its placeholders: {filter})`,
			},
		},
		{
			name:   "link item without a template",
			blocks: `{"kind": "links", "items": [{"label": "bad"}]}`,
			notes: []string{
				"blocks[0] dropped: its only item was dropped",
				"blocks[0].items[0] dropped: it names no link template; known: media {filter}; record {id}",
			},
		},
		{
			name:   "action with both prompt and link",
			blocks: `{"kind": "actions", "items": [{"label": "both", "prompt": "p", "link": {"template": "media", "values": {"filter": "x"}}}, {"label": "ok", "prompt": "p"}]}`,
			kinds:  []string{PresentActions},
			notes:  []string{"blocks[0].items[0] dropped: it has both a prompt and a link; give one: a prompt the user sends, or a link they open"},
		},
		{
			name:   "action with neither",
			blocks: `{"kind": "actions", "items": [{"label": "none"}, {"label": "ok", "prompt": "p"}]}`,
			kinds:  []string{PresentActions},
			notes:  []string{"blocks[0].items[0] dropped: it needs a prompt (sent as the user's next message) or a link"},
		},
		{
			name:   "metric without value, metric with a bad link",
			blocks: `{"kind": "metrics", "items": [{"label": "x"}, {"label": "y", "value": 2, "link": {"template": "nope"}}]}`,
			kinds:  []string{PresentMetrics},
			notes: []string{
				"blocks[0].items[0] dropped: it has no value",
				`blocks[0].items[1]: shown without its link: unknown link template "nope"; known: media {filter}; record {id}`,
			},
		},
		{
			name:   "rows of the wrong length",
			blocks: `{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}], "rows": [["x", 1], ["y"], ["z", 1, 2], ["w", 4]]}`,
			kinds:  []string{PresentTable},
			notes:  []string{"blocks[0]: dropped rows 1 and 2: want 2 cells, one per column"},
		},
		{
			name:   "no valid row",
			blocks: `{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}], "rows": [["x"]]}`,
			notes:  []string{"blocks[0] dropped: its only row was dropped", "blocks[0]: dropped row 0: want 2 cells, one per column"},
		},
		{
			name:   "percent of a text column",
			blocks: `{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}, {"label": "%", "percent_of": 0}], "rows": [["x", 1], ["y", 2]]}`,
			kinds:  []string{PresentTable},
			notes:  []string{"blocks[0].columns[2] dropped: percent_of names column 0, which does not hold numbers only"},
		},
		{
			name:   "only percent columns",
			blocks: `{"kind": "table", "columns": [{"label": "%", "percent_of": 0}], "rows": [[null]]}`,
			notes: []string{
				"blocks[0] dropped: none of its columns is left",
				"blocks[0].columns[0] dropped: percent_of names the column itself; name the numeric column whose share it shows",
			},
		},
		{
			name:   "percent of a missing column",
			blocks: `{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}, {"label": "%", "percent_of": 7}], "rows": [["x", 1, null]]}`,
			kinds:  []string{PresentTable},
			notes:  []string{"blocks[0].columns[2] dropped: percent_of is 7, but the table has 3 columns (indices from 0)"},
		},
		{
			name:   "bad row links",
			blocks: `{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}], "rows": [["x", 1], ["y", 2]], "row_links": [{"template": "nope"}, {"template": "nope"}, null]}`,
			kinds:  []string{PresentTable},
			notes: []string{
				`blocks[0].row_links: rows 0 and 1 without a link: unknown link template "nope"; known: media {filter}; record {id}`,
				"blocks[0]: row_links has 3 entries for 2 rows; the extra ones are ignored",
			},
		},
		{
			name:   "chart without a table",
			blocks: `{"kind": "chart", "chart_type": "bar"}, ` + table,
			kinds:  []string{PresentTable},
			notes:  []string{`blocks[0] dropped: no table comes before it; give the index in blocks of the table to draw as "table"`},
		},
		{
			name:   "chart of a later table",
			blocks: `{"kind": "chart", "chart_type": "line", "table": 1}, ` + table,
			kinds:  []string{PresentChart, PresentTable},
		},
		{
			name:   "chart of a block that is not a table",
			blocks: `{"kind": "actions", "items": [{"label": "a", "prompt": "b"}]}, {"kind": "chart", "table": 0}`,
			kinds:  []string{PresentActions},
			notes:  []string{"blocks[1] dropped: table is 0, but blocks[0] is not a table"},
		},
		{
			name:   "chart of a dropped table",
			blocks: `{"kind": "table", "columns": []}, {"kind": "chart"}`,
			notes:  []string{"blocks[0] dropped: a table needs columns", "blocks[1] dropped: its table, blocks[0], was dropped"},
		},
		{
			name:   "chart of a text column",
			blocks: table + `, {"kind": "chart", "value_column": 0}`,
			kinds:  []string{PresentTable},
			notes:  []string{"blocks[1] dropped: value_column 0 does not hold numbers"},
		},
		{
			name:   "pie of negative values",
			blocks: `{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}], "rows": [["x", 1], ["y", -2]]}, {"kind": "chart", "chart_type": "pie"}`,
			kinds:  []string{PresentTable},
			notes:  []string{"blocks[1] dropped: a pie chart needs values of zero or more (column 1 has -2)"},
		},
		{
			name:   "chart rows without a value",
			blocks: `{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}], "rows": [["x", 1], ["y", null]]}, {"kind": "chart"}`,
			kinds:  []string{PresentTable, PresentChart},
			notes:  []string{"blocks[1]: 1 row without a value in column 1 left out"},
		},
		{
			name:   "empty list",
			blocks: `{"kind": "metrics", "items": []}`,
			notes:  []string{"blocks[0] dropped: a metrics block needs items"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, blocks := present(t, `{"summary": "s", "blocks": [`+tt.blocks+`]}`)
			var kinds []string
			for _, b := range blocks {
				kinds = append(kinds, b.Kind)
			}
			if diff := cmp.Diff(tt.kinds, kinds); diff != "" {
				t.Errorf("blocks shown (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.notes, notes(res)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// notes returns the notes of a present_results result, sorted.
func notes(res Result) []string {
	_, list, ok := strings.Cut(res.Text(), "\nNotes:\n- ")
	if !ok {
		return nil
	}
	ns := strings.Split(list, "\n- ")
	slices.Sort(ns)
	return ns
}

// TestPresentResultsLimits checks that what is over a limit is cut and the
// model told.
func TestPresentResultsLimits(t *testing.T) {
	t.Parallel()
	row := func(i int) string { return fmt.Sprintf(`["r%d", %d]`, i, i) }
	rows := func(n int) string {
		rs := make([]string, n)
		for i := range rs {
			rs[i] = row(i)
		}
		return strings.Join(rs, ",")
	}
	items := func(n int) string {
		is := make([]string, n)
		for i := range is {
			is[i] = fmt.Sprintf(`{"label": "m%d", "value": %d}`, i, i)
		}
		return strings.Join(is, ",")
	}
	columns := func(n int) (string, string) {
		cs, cells := make([]string, n), make([]string, n)
		for i := range cs {
			cs[i], cells[i] = fmt.Sprintf(`{"label": "c%d"}`, i), fmt.Sprint(i)
		}
		return strings.Join(cs, ","), strings.Join(cells, ",")
	}
	cols25, cells25 := columns(25)
	blocks := make([]string, 105)
	for i := range blocks {
		blocks[i] = `{"kind": "actions", "items": [{"label": "a", "prompt": "p"}]}`
	}
	long := strings.Repeat("é", 2100)

	tests := []struct {
		name  string
		args  string
		check func(t *testing.T, p *conversation.Presentation, blocks []PresentBlock)
		notes []string
	}{
		{
			name: "summary",
			args: `{"summary": "` + strings.Repeat("s", 301) + `"}`,
			check: func(t *testing.T, p *conversation.Presentation, _ []PresentBlock) {
				if got := []rune(p.Summary); len(got) != MaxPresentSummary || got[len(got)-1] != '…' {
					t.Errorf("summary is %d characters ending %q, want %d ending with …", len(got), got[len(got)-1], MaxPresentSummary)
				}
			},
			notes: []string{"summary: cut to 300 characters; keep it to one sentence"},
		},
		{
			name: "columns",
			args: `{"summary": "s", "blocks": [{"kind": "table", "columns": [` + cols25 + `], "rows": [[` + cells25 + `]]}]}`,
			check: func(t *testing.T, _ *conversation.Presentation, b []PresentBlock) {
				if len(b[0].Columns) != MaxPresentColumns || len(b[0].Rows[0].Cells) != MaxPresentColumns {
					t.Errorf("%d columns, %d cells; want %d", len(b[0].Columns), len(b[0].Rows[0].Cells), MaxPresentColumns)
				}
			},
			notes: []string{"blocks[0]: 25 columns, showing the first 20"},
		},
		{
			name: "rows",
			args: `{"summary": "s", "blocks": [{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}], "rows": [` + rows(210) + `]}]}`,
			check: func(t *testing.T, _ *conversation.Presentation, b []PresentBlock) {
				if len(b[0].Rows) != MaxPresentRows {
					t.Errorf("%d rows, want %d", len(b[0].Rows), MaxPresentRows)
				}
			},
			notes: []string{"blocks[0]: 210 rows, showing the first 200"},
		},
		{
			name: "chart points",
			args: `{"summary": "s", "blocks": [{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}], "rows": [` + rows(13) + `]}, {"kind": "chart", "chart_type": "line"}]}`,
			check: func(t *testing.T, _ *conversation.Presentation, b []PresentBlock) {
				if len(b[0].Rows) != 13 || len(b[1].Points) != MaxPresentPoints || b[1].Points[11].Label != "r11" {
					t.Errorf("%d rows, %d points ending %q; want 13 rows and the first 12 points", len(b[0].Rows), len(b[1].Points), b[1].Points[len(b[1].Points)-1].Label)
				}
			},
			notes: []string{"blocks[1]: 13 points, showing the first 12 (the table shows every row)"},
		},
		{
			name: "pie slices",
			args: `{"summary": "s", "blocks": [{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}], "rows": [` + rows(13) + `]}, {"kind": "chart", "chart_type": "pie"}]}`,
			check: func(t *testing.T, _ *conversation.Presentation, b []PresentBlock) {
				last := b[1].Points[len(b[1].Points)-1]
				if len(b[1].Points) != MaxPresentPoints || last.Label != "Other" || last.Display != "23" {
					t.Errorf("%d points ending %+v; want 12 ending with Other = 11 + 12", len(b[1].Points), last)
				}
			},
			notes: []string{`blocks[1]: 13 slices; a chart holds 12, so the last 2 are summed as "Other"`},
		},
		{
			name: "list entries",
			args: `{"summary": "s", "blocks": [{"kind": "metrics", "items": [` + items(105) + `]}]}`,
			check: func(t *testing.T, _ *conversation.Presentation, b []PresentBlock) {
				if len(b[0].Items) != MaxPresentItems {
					t.Errorf("%d items, want %d", len(b[0].Items), MaxPresentItems)
				}
			},
			notes: []string{"blocks[0]: 105 items, showing the first 100"},
		},
		{
			name: "blocks",
			args: `{"summary": "s", "blocks": [` + strings.Join(blocks, ",") + `]}`,
			check: func(t *testing.T, _ *conversation.Presentation, b []PresentBlock) {
				if len(b) != MaxPresentItems {
					t.Errorf("%d blocks, want %d", len(b), MaxPresentItems)
				}
			},
			notes: []string{"blocks: 105 blocks, showing the first 100"},
		},
		{
			name: "display text",
			args: `{"summary": "s", "blocks": [{"kind": "actions", "title": "` + long + `", "items": [{"label": "` + long + `", "prompt": "` + long + `"}]}]}`,
			check: func(t *testing.T, _ *conversation.Presentation, b []PresentBlock) {
				for _, s := range []string{b[0].Title, b[0].Items[0].Label, b[0].Items[0].Prompt} {
					if n := len([]rune(s)); n != MaxPresentText || !strings.HasSuffix(s, "é…") {
						t.Errorf("text of %d characters ending %q, want %d ending é…", n, s[len(s)-4:], MaxPresentText)
					}
				}
			},
			notes: []string{"3 texts were longer than 2000 characters and were cut"},
		},
		{
			name: "link value",
			args: `{"summary": "s", "blocks": [{"kind": "links", "items": [{"label": "a", "template": "media", "values": {"filter": "` + long + `"}}]}]}`,
			notes: []string{
				"blocks[0] dropped: its only item was dropped",
				"blocks[0].items[0] dropped: the value of {filter} is 2100 characters long, want at most 2000",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, blocks := present(t, tt.args)
			if tt.check != nil {
				tt.check(t, res.Presentation, blocks)
			}
			if diff := cmp.Diff(tt.notes, notes(res)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPresentResultsNotesBounded checks that one mistake made on many rows
// is one note, and that the notes of a call are bounded.
func TestPresentResultsNotesBounded(t *testing.T) {
	t.Parallel()
	rows := make([]string, 30)
	for i := range rows {
		rows[i] = `["x"]`
	}
	res, _ := present(t, `{"summary": "s", "blocks": [{"kind": "table", "columns": [{"label": "a"}, {"label": "b"}], "rows": [["ok", 1], `+strings.Join(rows, ",")+`]}]}`)
	want := []string{"blocks[0]: dropped rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 20 more: want 2 cells, one per column"}
	if diff := cmp.Diff(want, notes(res)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}

	items := make([]string, 30)
	for i := range items {
		items[i] = fmt.Sprintf(`{"label": "l%d", "template": "nope%d"}`, i, i)
	}
	res, _ = present(t, `{"summary": "s", "blocks": [{"kind": "links", "items": [`+strings.Join(items, ",")+`]}]}`)
	ns := notes(res)
	if len(ns) != maxPresentNotes+1 || !slices.Contains(ns, "and 11 more") {
		t.Errorf("%d notes, want %d and a count of the rest:\n%s", len(ns), maxPresentNotes+1, strings.Join(ns, "\n"))
	}
}

// TestPresentResultsModelURL checks that a URL the model writes never
// becomes a link: an href is refused by the schema, a URL as a template
// name is an unknown template, and a URL in a label or a value is text.
func TestPresentResultsModelURL(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, presentTool(t))
	for _, args := range []string{
		`{"summary": "s", "blocks": [{"kind": "links", "items": [{"label": "x", "href": "https://evil.example"}]}]}`,
		`{"summary": "s", "blocks": [{"kind": "actions", "items": [{"label": "x", "link": {"url": "https://evil.example"}}]}]}`,
	} {
		res := r.Call(context.Background(), call(PresentResults, args))
		if !res.IsError || !strings.Contains(res.Text(), "unknown property, remove it") || res.Presentation != nil {
			t.Errorf("%s: %s (IsError %v); want the call refused", args, res.Text(), res.IsError)
		}
	}

	args, err := os.ReadFile("testdata/present/model_url.json")
	if err != nil {
		t.Fatal(err)
	}
	res, blocks := present(t, string(args))
	var hrefs []string
	for _, it := range blocks[0].Items {
		hrefs = append(hrefs, it.Href)
	}
	want := []string{"/app/media/..%2F..%2Fadmin", "/app/media?filter=https%3A%2F%2Fevil.example%2F%3Fa%3D1%23b"}
	if diff := cmp.Diff(want, hrefs); diff != "" {
		t.Errorf("hrefs (-want +got):\n%s", diff)
	}
	if strings.Contains(res.Presentation.Markdown, "https://evil") {
		t.Errorf("markdown holds a link or an autolink of the model's URL:\n%s", res.Presentation.Markdown)
	}
}

// TestPresentResultsEscaping checks the label holding <script> and |: the
// blocks keep the text as it is (clients show it as text), the markdown
// escapes it.
func TestPresentResultsEscaping(t *testing.T) {
	t.Parallel()
	args, err := os.ReadFile("testdata/present/escaping.json")
	if err != nil {
		t.Fatal(err)
	}
	res, blocks := present(t, string(args))
	if got := blocks[0].Rows[0].Display["c0"]; got != "<script>alert(1)</script>" {
		t.Errorf("display = %q, want the label as it is", got)
	}
	md := res.Presentation.Markdown
	for _, s := range []string{"<script", "<b>", "<img", "[click](javascript"} {
		if strings.Contains(md, s) {
			t.Errorf("markdown holds %q:\n%s", s, md)
		}
	}
	for _, s := range []string{
		"| &lt;script&gt;alert(1)&lt;/script&gt; | 1,234,567 |",
		`| a\|b c | 2,048.5 |`,
		`| Name \| kind | Size |`,
		`\# 3 files have odd names &lt;b&gt;bold&lt;/b&gt; &amp; more`,
		`| \[click\](javascript:alert(1)) https:\/\/evil.example www\.evil.example x\@evil.example | -1,200 |`,
	} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	// Every table line has as many cells as the header.
	for line := range strings.Lines(md) {
		if strings.HasPrefix(line, "|") {
			if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 3 {
				t.Errorf("table line %q has %d cell separators, want 3", line, n)
			}
		}
	}
}

func TestPresentResultsErrors(t *testing.T) {
	t.Parallel()
	r := mustRegistry(t, presentTool(t))
	tests := []struct {
		name string
		args string
		want string
	}{
		{"missing summary", `{"blocks": []}`, "invalid arguments for present_results: /summary: missing required property"},
		{"blank summary", `{"summary": " \n "}`, PresentResultsSummaryBlank},
		{"unknown kind in the schema", `{"summary": "s", "blocks": [{"kind": "video"}]}`,
			`invalid arguments for present_results: /blocks/0/kind: must be one of "metrics", "table", "chart", "links", "actions"`},
		{"a cell that is an object", `{"summary": "s", "blocks": [{"kind": "table", "columns": [{"label": "a"}], "rows": [[{"x": 1}]]}]}`,
			"invalid arguments for present_results: /blocks/0/rows/0/0: got object, want null or boolean or number or string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.Call(context.Background(), call(PresentResults, tt.args))
			if diff := cmp.Diff(ErrorResult("%s", tt.want), got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPresentResultsCallUnchecked checks what the registry's schema check
// normally keeps away, for a caller that calls the tool directly: the bad
// block is dropped, the rest is shown.
func TestPresentResultsCallUnchecked(t *testing.T) {
	t.Parallel()
	res, err := presentTool(t).Call(context.Background(), json.RawMessage(`{"summary": "s", "blocks": [
		{"kind": "video"},
		{"kind": "table", "columns": "nope"},
		{"kind": "table", "columns": [{"label": "a"}, {"label": "%", "percent_of": -1}], "rows": [[1, null], [{"x": 1}, 2]]},
		{"kind": "chart", "label_column": -3}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []PresentBlock
	if err := json.Unmarshal(res.Presentation.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 || len(blocks[0].Columns) != 1 || len(blocks[0].Rows) != 1 {
		t.Errorf("blocks = %+v, want the table with one column and one row", blocks)
	}
	want := []string{
		`blocks[0] dropped: unknown kind "video" (want metrics, table, chart, links or actions)`,
		"blocks[1] dropped: not a valid block (json: cannot unmarshal string into Go struct field blockArgs.columns of type []tools.columnArgs)",
		"blocks[2].columns[1] dropped: percent_of is -1, but the table has 2 columns (indices from 0)",
		"blocks[2]: dropped row 1: a cell must be a string, a number, a boolean or null",
		"blocks[3] dropped: label_column -3 is not a column of the table blocks[2]",
	}
	if diff := cmp.Diff(want, notes(res)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}

	if _, err := presentTool(t).Call(context.Background(), json.RawMessage(`[]`)); err == nil || !strings.Contains(err.Error(), "invalid arguments for present_results") {
		t.Errorf("Call([]) error = %v", err)
	}
}

func TestPresentResultsDefinition(t *testing.T) {
	t.Parallel()
	def := presentTool(t).Definition()
	if def.Name != PresentResults {
		t.Errorf("Name = %q", def.Name)
	}
	for _, s := range []string{"summary", "Never write a URL", "do not repeat its data in respond",
		"Link templates you may name, with their placeholders: media ({filter}), record ({id})."} {
		if !strings.Contains(def.Description, s) {
			t.Errorf("description lacks %q:\n%s", s, def.Description)
		}
	}
	none, err := PresentResultsTool(PresentResultsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if d := none.Definition().Description; !strings.HasSuffix(d, "No link templates are declared for you, so do not use links.") {
		t.Errorf("description without templates: %s", d)
	}
	// The schema refuses what the model may not send, and bounds nothing
	// that is cut instead.
	for _, s := range []string{`"maxLength"`, `"maxItems"`, `"href"`, `"url"`} {
		if bytes.Contains(def.Schema, []byte(s)) {
			t.Errorf("schema holds %s", s)
		}
	}
}

func TestPresentResultsFactory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		config  map[string]any
		want    string // error; "" for none
		wantDef string // in the description, when it builds
	}{
		{name: "no config", wantDef: "No link templates are declared"},
		{name: "links from YAML", config: map[string]any{"links": map[string]any{"media": "/app/media?filter={filter}"}}, wantDef: "media ({filter})"},
		{name: "links from Go", config: map[string]any{"links": map[string]string{"search": "https://duckduckgo.com/?q={query}"}}, wantDef: "search ({query})"},
		{name: "unknown key", config: map[string]any{"links": nil, "base": "/"}, want: "present_results: unknown config key base (known: links)"},
		{name: "links not a mapping", config: map[string]any{"links": []any{"x"}},
			want: `present_results: links: want a mapping of names to link templates, such as {media: "/app/media?filter={filter}"} (got [x])`},
		{name: "template not a string", config: map[string]any{"links": map[string]any{"media": 3}},
			want: `present_results: links.media: want a link template such as "/app/items/{id}" (got 3)`},
		{name: "every bad template", config: map[string]any{"links": map[string]any{
			"Media": "/x", "ftp": "ftp://x/{a}", "open": "/x/{a", "close": "/x/a}", "space": "/x/{a b}", "away": "//evil.example/{a}",
		}}, want: "present_results: " +
			"links: \"Media\": a link name must be lowercase letters, digits and `_`, starting with a letter; " +
			"links.away: \"//evil.example/{a}\" starts with `//`, which leaves the site; write a path such as /app/... or a full https:// URL; " +
			"links.close: `}` without `{` in \"/x/a}\"; placeholders are written {name}; " +
			"links.ftp: a link template must start with `/`, `https://` or `http://` (got \"ftp://x/{a}\"); " +
			"links.open: `{` without `}` in \"/x/{a\"; placeholders are written {name}; " +
			"links.space: placeholder {a b} in \"/x/{a b}\" must be a name of lowercase letters, digits and `_`, starting with a letter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool, err := BuiltinCatalog()[PresentResults](tt.config)
			if tt.want != "" {
				if err == nil || err.Error() != tt.want {
					t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := tool.Definition().Description; !strings.Contains(d, tt.wantDef) {
				t.Errorf("description lacks %q: %s", tt.wantDef, d)
			}
		})
	}
}
