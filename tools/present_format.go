package tools

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of present_results. What is over a limit is cut, and the model is
// told.
const (
	// MaxPresentSummary is the most characters of the summary.
	MaxPresentSummary = 300
	// MaxPresentText is the most characters of any other text shown: a
	// title, a label, a cell, a prompt (and of a link value).
	MaxPresentText = 2000
	// MaxPresentColumns and MaxPresentRows bound a table.
	MaxPresentColumns = 20
	MaxPresentRows    = 200
	// MaxPresentPoints is the most points of a chart.
	MaxPresentPoints = 12
	// MaxPresentItems is the most entries of a list: the blocks, and the
	// items of a metrics, links or actions block.
	MaxPresentItems = 100
)

// Formats of a table column.
const (
	// FormatNumber shows numbers with thousands separators: 12,345.5.
	FormatNumber = "number"
	// FormatPlain shows numbers as written: years, ids, codes.
	FormatPlain = "plain"
)

// clip cuts s to max characters, marking a cut with "…", and reports
// whether it cut.
func clip(s string, max int) (string, bool) {
	if utf8.RuneCountInString(s) <= max {
		return s, false
	}
	head, _ := Cut(s, max-1)
	return head + "…", true
}

// oneLine returns s trimmed, with its line breaks and tabs made spaces: a
// label, a title or a summary is one line of text.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// display returns how a raw scalar is shown: a string as it is, a number
// with thousands separators (or as written, with FormatPlain), a boolean as
// yes or no, null as "".
func display(v any, format string) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		if format == FormatPlain {
			return v.String()
		}
		return groupNumber(v)
	case float64:
		return groupNumber(json.Number(strconv.FormatFloat(v, 'f', -1, 64)))
	case bool:
		if v {
			return "yes"
		}
		return "no"
	}
	return ""
}

// groupNumber writes n with a comma between thousands: 1234567.25 is
// "1,234,567.25". An integer keeps every digit it was written with; other
// numbers are shown in full, without an exponent.
func groupNumber(n json.Number) string {
	s := n.String()
	if strings.ContainsAny(s, ".eE") {
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return s
		}
		if f == 0 {
			return "0" // not -0
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var sb strings.Builder
	sb.WriteString(sign)
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteRune(c)
	}
	if hasFrac {
		sb.WriteByte('.')
		sb.WriteString(frac)
	}
	return sb.String()
}

// numeric returns v as a float64 when it is a number.
func numeric(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	}
	return 0, false
}

// share returns v's share of total as a fraction rounded to a tenth of a
// percent, and its display ("80.2%"). A zero total gives 0 and "0.0%".
func share(v, total float64) (float64, string) {
	if total == 0 {
		return 0, "0.0%"
	}
	tenths := math.Round(v / total * 1000)
	if tenths == 0 {
		tenths = 0 // not -0
	}
	return tenths / 1000, strconv.FormatFloat(tenths/10, 'f', 1, 64) + "%"
}

// Cut returns the first n characters (runes) of s and how many s has: for
// tools that bound the text they return.
func Cut(s string, n int) (string, int) {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s, total
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j], total
		}
		i++
	}
	return s, total
}
