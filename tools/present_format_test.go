package tools

import (
	"encoding/json"
	"testing"
)

func TestDisplay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v      any
		format string
		want   string
	}{
		{json.Number("0"), FormatNumber, "0"},
		{json.Number("81"), FormatNumber, "81"},
		{json.Number("1234"), FormatNumber, "1,234"},
		{json.Number("-1234567"), FormatNumber, "-1,234,567"},
		{json.Number("123456789012345678901"), FormatNumber, "123,456,789,012,345,678,901"},
		{json.Number("2048.5"), FormatNumber, "2,048.5"},
		{json.Number("-0.25"), FormatNumber, "-0.25"},
		{json.Number("1.5e6"), FormatNumber, "1,500,000"},
		{json.Number("-0.0"), FormatNumber, "0"},
		{json.Number("2026"), FormatPlain, "2026"},
		{1234.5, FormatNumber, "1,234.5"},
		{"12,000 files", FormatNumber, "12,000 files"},
		{true, FormatNumber, "yes"},
		{false, FormatNumber, "no"},
		{nil, FormatNumber, ""},
	}
	for _, tt := range tests {
		if got := display(tt.v, tt.format); got != tt.want {
			t.Errorf("display(%#v, %s) = %q, want %q", tt.v, tt.format, got, tt.want)
		}
	}
}

func TestShare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v, total float64
		value    float64
		display  string
	}{
		{81, 101, 0.802, "80.2%"},
		{20, 101, 0.198, "19.8%"},
		{1, 3, 0.333, "33.3%"},
		{2, 3, 0.667, "66.7%"},
		{5, 5, 1, "100.0%"},
		{0, 0, 0, "0.0%"},
		{3, 0, 0, "0.0%"},
		{0, 7, 0, "0.0%"},
		{-1e-9, 7, 0, "0.0%"},
	}
	for _, tt := range tests {
		value, display := share(tt.v, tt.total)
		if value != tt.value || display != tt.display {
			t.Errorf("share(%v, %v) = %v, %q; want %v, %q", tt.v, tt.total, value, display, tt.value, tt.display)
		}
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	if got, cut := clip("héllo", 5); got != "héllo" || cut {
		t.Errorf("clip at the limit = %q, %v", got, cut)
	}
	if got, cut := clip("héllo!", 5); got != "héll…" || !cut {
		t.Errorf("clip over the limit = %q, %v", got, cut)
	}
}
