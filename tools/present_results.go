package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/engine-brain/brain/conversation"
)

// PresentResultsDescription is the model-visible description of
// present_results, before the list of the recipe's link templates.
const PresentResultsDescription = "Show the user results with structure: a one-sentence summary (the direct answer " +
	"first) and blocks, in order: 'metrics' (key figures), 'table' (columns and rows of raw values; a percent column " +
	"is computed by the server from a numeric column), 'chart' (a bar, pie or line chart of a table's columns, at " +
	"most 12 points), 'links' (each built by the server from a link template and values for its placeholders) and " +
	"'actions' (follow-ups: a 'prompt' the user can send as their next message, or a link). Give numbers as raw " +
	"numbers (81, not \"81 files\"); the server formats them. Never write a URL: name a link template instead. " +
	"Use a table for 3 or more items, a pie chart for shares, a line chart for trends. The user sees the " +
	"presentation in full, so do not repeat its data in respond: answer in a sentence or two. Invalid entries are " +
	"dropped and you are told why."

// presentResultsSchema is the schema of present_results. A block is one
// flat object whose fields depend on its kind, checked in Go: the OpenAI
// and Anthropic APIs refuse a tool whose schema has oneOf, anyOf or allOf at
// its top level. $LINK is replaced by the schema of a link.
const presentResultsSchema = `{
	"type": "object",
	"properties": {
		"summary": {
			"type": "string",
			"description": "One plain-text sentence, at most 300 characters: the direct answer first, such as \"101 media files are images: 81 JPEG and 20 PNG.\""
		},
		"blocks": {
			"type": "array",
			"description": "What to show under the summary, in order (at most 100 blocks).",
			"items": {
				"type": "object",
				"properties": {
					"kind": {
						"type": "string",
						"enum": ["metrics", "table", "chart", "links", "actions"],
						"description": "metrics, links and actions use items; table uses columns, rows and row_links; chart uses chart_type, table, label_column and value_column."
					},
					"title": {"type": "string", "description": "Heading of the block (optional)."},
					"items": {
						"type": "array",
						"description": "metrics: {label, value, link?}; links: {label, template, values}; actions: {label, prompt} or {label, link}, never both. At most 100.",
						"items": {
							"type": "object",
							"properties": {
								"label": {"type": "string", "description": "The text shown."},
								"value": {"type": ["number", "string"], "description": "metrics: the figure, as a raw number where it is one."},
								"template": {"type": "string", "description": "links: the name of a link template."},
								"values": {
									"type": "object",
									"additionalProperties": {"type": ["string", "number", "boolean"]},
									"description": "links: a value for each {placeholder} of the template, such as {\"filter\": \"type:jpeg\"}."
								},
								"prompt": {"type": "string", "description": "actions: the message sent as the user's when they choose this action."},
								"link": $LINK
							},
							"required": ["label"],
							"additionalProperties": false
						}
					},
					"columns": {
						"type": "array",
						"description": "table: the columns, at most 20.",
						"items": {
							"type": "object",
							"properties": {
								"label": {"type": "string"},
								"align": {"type": "string", "enum": ["left", "right", "center"], "description": "Default: right for numbers, left for text."},
								"format": {"type": "string", "enum": ["number", "plain"], "description": "number (default): 12,345; plain: as written, for years, ids and codes."},
								"percent_of": {"type": "integer", "minimum": 0, "description": "Makes this a percent column: each row's share of the total of the numeric column at this 0-based index, computed by the server (81 and 20 give 80.2% and 19.8%). Give its cells as null, or leave them out of every row."}
							},
							"required": ["label"],
							"additionalProperties": false
						}
					},
					"rows": {
						"type": "array",
						"description": "table: the rows, at most 200; each a list of raw values, one per column in order.",
						"items": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}}
					},
					"row_links": {
						"type": "array",
						"description": "table: where each row leads, by row index (null for none).",
						"items": $LINK_OR_NULL
					},
					"chart_type": {"type": "string", "enum": ["bar", "pie", "line"], "description": "chart: default bar."},
					"table": {"type": "integer", "minimum": 0, "description": "chart: the 0-based index in blocks of the table to draw; default the nearest table before the chart."},
					"label_column": {"type": "integer", "minimum": 0, "description": "chart: the 0-based index of the column that labels the points; default 0."},
					"value_column": {"type": "integer", "minimum": 0, "description": "chart: the 0-based index of the numeric column to draw; default the first numeric column."}
				},
				"required": ["kind"],
				"additionalProperties": false
			}
		}
	},
	"required": ["summary"],
	"additionalProperties": false
}`

// linkSchema is the schema of a link: a template and its values.
const linkSchema = `{
	"type": %s,
	"properties": {
		"template": {"type": "string", "description": "The name of a link template."},
		"values": {
			"type": "object",
			"additionalProperties": {"type": ["string", "number", "boolean"]},
			"description": "A value for each {placeholder} of the template."
		}
	},
	"required": ["template"],
	"additionalProperties": false
}`

// PresentResultsSummaryBlank is the error of a present_results call
// without a usable summary.
const PresentResultsSummaryBlank = `present_results "summary" is blank: give one sentence with the direct answer`

// PresentResultsConfig is the settings of present_results.
type PresentResultsConfig struct {
	// Links are the link templates by name: "/app/media?filter={filter}"
	// or "https://example.com/items/{id}". Each starts with "/" (but not
	// "//"), "https://" or "http://"; its {placeholders} are lowercase
	// names. The model names a template and gives the values; a value is
	// escaped for the part of the URL it stands in (url.PathEscape in the
	// path, url.QueryEscape in the query and fragment; only letters,
	// digits, "-" and "." in a host name).
	Links map[string]string
}

// parsePresentResultsConfig reads the settings a recipe gives
// present_results:
//
//	tools:
//	  - name: present_results
//	    config: {links: {media: "/app/media?filter={filter}"}}
//
// A recipe usually declares its templates in presentation.links instead,
// which the chat engine passes as this config.
func parsePresentResultsConfig(config map[string]any) (PresentResultsConfig, error) {
	var cfg PresentResultsConfig
	if unknown := slices.DeleteFunc(slices.Sorted(maps.Keys(config)), func(k string) bool { return k == "links" }); len(unknown) > 0 {
		keys := "key"
		if len(unknown) > 1 {
			keys = "keys"
		}
		return cfg, fmt.Errorf("%s: unknown config %s %s (known: links)", PresentResults, keys, strings.Join(unknown, ", "))
	}
	switch v := config["links"].(type) {
	case nil:
	case map[string]string:
		cfg.Links = maps.Clone(v)
	case map[string]any:
		cfg.Links = make(map[string]string, len(v))
		for _, name := range slices.Sorted(maps.Keys(v)) {
			s, ok := v[name].(string)
			if !ok {
				return PresentResultsConfig{}, fmt.Errorf("%s: links.%s: want a link template such as \"/app/items/{id}\" (got %v)", PresentResults, name, v[name])
			}
			cfg.Links[name] = s
		}
	default:
		return cfg, fmt.Errorf("%s: links: want a mapping of names to link templates, such as {media: \"/app/media?filter={filter}\"} (got %v)", PresentResults, v)
	}
	return cfg, nil
}

// PresentResultsTool returns the present_results tool with the link
// templates of cfg. It fails on a template that [PresentResultsConfig] does
// not allow, naming it.
//
// A call's result carries the presentation for the user in
// [Result.Presentation] (the engine records it as a presentation event)
// and, for the model, a short text saying what was shown and what was
// dropped or cut, and why.
func PresentResultsTool(cfg PresentResultsConfig) (Tool, error) {
	links, err := parseLinkSet(cfg.Links)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", PresentResults, err)
	}
	r := strings.NewReplacer(
		"$LINK_OR_NULL", fmt.Sprintf(linkSchema, `["object", "null"]`),
		"$LINK", fmt.Sprintf(linkSchema, `"object"`),
	)
	return &presentResultsTool{
		links: links,
		def: Definition{
			Name:        PresentResults,
			Description: PresentResultsDescription + " " + links.describe(),
			Schema:      Compact(r.Replace(presentResultsSchema)),
			Replayable:  true,
		},
	}, nil
}

// presentResultsFactory is the catalog entry of present_results: its only
// setting is links, a mapping of names to link templates.
func presentResultsFactory(config map[string]any) (Tool, error) {
	cfg, err := parsePresentResultsConfig(config)
	if err != nil {
		return nil, err
	}
	return PresentResultsTool(cfg)
}

type presentResultsTool struct {
	links linkSet
	def   Definition
}

var _ Tool = (*presentResultsTool)(nil)

func (t *presentResultsTool) Definition() Definition { return t.def }

// presentArgs are the arguments of a present_results call. Each block is
// decoded on its own, so that a malformed one is dropped and the others
// are shown.
type presentArgs struct {
	Summary *string           `json:"summary"`
	Blocks  []json.RawMessage `json:"blocks"`
}

func (t *presentResultsTool) Call(_ context.Context, args json.RawMessage) (Result, error) {
	var a presentArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return Result{}, reason(ErrInvalidArguments, `invalid arguments for present_results (%v); send {"summary": "...", "blocks": [...]}`, err)
	}
	if a.Summary == nil || strings.TrimSpace(*a.Summary) == "" {
		return Result{}, reason(ErrInvalidArguments, PresentResultsSummaryBlank)
	}
	p := &presenter{links: t.links}
	summary, cut := clip(oneLine(*a.Summary), MaxPresentSummary)
	if cut {
		p.note("summary: cut to %d characters; keep it to one sentence", MaxPresentSummary)
	}
	blocks := p.blocks(a.Blocks)
	pres := &conversation.Presentation{Summary: summary, Markdown: presentMarkdown(summary, blocks)}
	if len(blocks) > 0 {
		b, err := json.Marshal(blocks)
		if err != nil {
			return Result{}, fmt.Errorf("present_results: encode blocks: %w", err)
		}
		pres.Blocks = b
	}
	return Result{
		Content:      []conversation.Block{conversation.TextBlock(p.report(blocks)).For(conversation.RoleAssistant)},
		Presentation: pres,
	}, nil
}

// decodeBlock decodes one block's arguments, numbers as json.Number so
// that they are shown as written.
func decodeBlock(raw json.RawMessage) (blockArgs, error) {
	var b blockArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	err := dec.Decode(&b)
	return b, err
}

// maxPresentNotes bounds the notes of one result.
const maxPresentNotes = 20

// report is the text the model reads: what was shown, then the notes.
func (p *presenter) report(blocks []PresentBlock) string {
	var sb strings.Builder
	sb.WriteString("Shown to the user: the summary")
	for _, b := range blocks {
		sb.WriteString(", ")
		sb.WriteString(b.describe())
	}
	sb.WriteString(". They see it in full: do not repeat its data in respond; answer in a sentence or two.")
	if p.clipped > 0 {
		p.note("%d texts were longer than %d characters and were cut", p.clipped, MaxPresentText)
	}
	if len(p.notes) > 0 {
		sb.WriteString("\nNotes:")
		for i, n := range p.notes {
			if i == maxPresentNotes {
				fmt.Fprintf(&sb, "\n- and %d more", len(p.notes)-i)
				break
			}
			sb.WriteString("\n- ")
			sb.WriteString(n)
		}
	}
	return sb.String()
}

// describe names b for the model: `a table "Media by type" (2 rows, 3
// columns)`, `links (2)`.
func (b *PresentBlock) describe() string {
	title := ""
	if b.Title != "" {
		title = fmt.Sprintf(" %q", b.Title)
	}
	switch b.Kind {
	case PresentTable:
		return fmt.Sprintf("a table%s (%s, %s)", title, count(len(b.Rows), "row"), count(len(b.Columns), "column"))
	case PresentChart:
		return fmt.Sprintf("a %s chart%s (%s)", b.ChartType, title, count(len(b.Points), "point"))
	}
	return fmt.Sprintf("%s%s (%d)", b.Kind, title, len(b.Items))
}

// count returns "1 row", "2 rows".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
